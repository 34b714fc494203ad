"""Names of the columns asaql adds to every event. No leading underscore: the pandas path of
transformWithState renames such columns to `_<position>`."""

FILE = "asaql__file"
LINE = "asaql__line"
ARRIVAL = "asaql__arrival"
PARTITION = "asaql__partition"
ERROR = "asaql__error"
RAW = "asaql__raw"
EVENT_TIME = "asaql__event_time"
KEY = "asaql__key"  # the policy key as text: PartitionId, or the OVER values as a JSON array
BUCKET = "asaql__bucket"  # the stateful step's Spark grouping key
CONTROL = "asaql__control"  # set on asaql's own control records
SYSTEM_TIMESTAMP = "asaql__ts"
# Inside the step: each event's System.Timestamp (µs); an analytic argument or a GROUP BY key
# naming this column reads the event's own
EVENT_TIMESTAMP = "ts"
FLAGS = "asaql__flags"
# JOINs of two streams: which input a row comes from (0 left, 1 right), the ON keys' values as
# text, a right event's record as JSON, a left event's partners (a JSON list of {"t", "r"}), and
# a joined row's System.Timestamp.
SIDE = "asaql__side"
JOIN_KEY = "asaql__jkey"
PARTNER_RECORD = "asaql__rrec"
PARTNERS = "asaql__partners"
JOIN_TIME = "asaql__jts"
# The run's first pass finding the input's partitions (a sampled schema's run): what the
# partitions' scan finds of each record's text, its PartitionId and its arrival time
FOUND_PARTITION = "asaql__found_partition"
FOUND_ARRIVAL = "asaql__found_arrival"

INTERNAL = (FILE, LINE, ARRIVAL, PARTITION, ERROR, RAW, EVENT_TIME, KEY, BUCKET, CONTROL,
            SYSTEM_TIMESTAMP, FLAGS, SIDE, JOIN_KEY, PARTNER_RECORD, PARTNERS, JOIN_TIME,
            FOUND_PARTITION, FOUND_ARRIVAL)

# Bits of FLAGS, set by the event-ordering step.
EARLY, LATE, OUT_OF_ORDER, DROPPED = 1, 2, 4, 8

ARRIVAL_FIELD = "EventEnqueuedUtcTime"
PARTITION_FIELD = "PartitionId"

# The stateful step's output: ROW_KIND tells an event, a window result (of statement STATEMENT),
# the counts of one invocation, an event a windowed statement's CAST failed on apart, an event
# released in processing order with its analytic function values, or a left event of a JOIN of
# two streams with its partners.
ROW_KIND = "asaql__kind"
STATEMENT = "asaql__stmt"
EVENT, RESULT, COUNTS, FAILED, ORDERED, JOINED = 0, 1, 2, 3, 4, 5
# The COUNTS row's columns: events read, early, late, out of order, dropped, the events the
# bucket's state holds for windows not closed yet, and the bucket's arrival clock (µs).
COUNT_COLUMNS = ("asaql__n_input", "asaql__n_early", "asaql__n_late", "asaql__n_ooo",
                 "asaql__n_dropped", "asaql__n_state", "asaql__clock")
# Also in the COUNTS row: the step's output watermark (µs) — every row it writes from now on is
# at or above it — which a stage passes on to the step that reads it.
OUT_WATERMARK = "asaql__out_wm"
# And, for `--metrics`: the bucket's watermark per key ("*": combined) as JSON, and the first
# late event of the invocation (where it was read, its times) as JSON.
WATERMARKS = "asaql__marks"
LATE_SAMPLE = "asaql__late"
METRIC_COLUMNS = (WATERMARKS, LATE_SAMPLE)

# Control records, written by asaql into its own folder beside the input: the end of a finite
# input (the arrival clock runs out) and, with --follow, the arrival clock of an idle input.
CONTROL_END = "end"
CONTROL_TICK = "tick"
CONTROL_WATERMARK = "watermark"  # a stage's rows: its producer's watermark, "watermark:<µs>"
