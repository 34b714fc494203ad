"""Names of the columns asaql adds to every event. No leading underscore: the pandas path of
transformWithState renames such columns to `_<position>`."""

FILE = "asaql__file"
LINE = "asaql__line"
ARRIVAL = "asaql__arrival"
PARTITION = "asaql__partition"
ERROR = "asaql__error"
RAW = "asaql__raw"
EVENT_TIME = "asaql__event_time"
KEY = "asaql__key"
SYSTEM_TIMESTAMP = "asaql__ts"
FLAGS = "asaql__flags"

INTERNAL = (FILE, LINE, ARRIVAL, PARTITION, ERROR, RAW, EVENT_TIME, KEY, SYSTEM_TIMESTAMP, FLAGS)

# Bits of FLAGS, set by the event-ordering step.
EARLY, LATE, OUT_OF_ORDER, DROPPED = 1, 2, 4, 8

ARRIVAL_FIELD = "EventEnqueuedUtcTime"
PARTITION_FIELD = "PartitionId"
