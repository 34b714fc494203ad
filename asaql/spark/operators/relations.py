"""Plan → Spark: one streaming DataFrame per timestamped source, one batch builder per output.

The streaming part is read → the source's one stateful step (policy, watermarks, windows:
asaql/runtime/step.py). Everything after it is row-wise and runs on each micro-batch, and no
Spark watermark exists anywhere: no Spark operator can drop or early-close a row.
A source without TIMESTAMP BY and without windows has no stateful step at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.stages import is_stage
from asaql.errors import ConfigurationError
from asaql.inputs.formats import InputFormat
from asaql.plan.step_path import general_step_reason
from asaql.plan.nodes import (
    ApplyEventOrdering, Plan, PlanNode, ReadStage, WriteOutput, analytics_below, source_alias,
    stream_join_below, timestamped_source, watermark_scope,
)
from asaql.runtime import columns as C
from asaql.runtime.step import SourceStep, StepSpec
from asaql.spark.lowering.analytics import lower_analytics
from asaql.spark.lowering.expressions import Scope
from asaql.spark.lowering.windowing import (
    WindowedStatement, is_windowed, prepare, split_windowed,
)
from asaql.spark.operators.joins import JoinGroup, join_stream
from asaql.spark.operators.native_coverage import floating_columns, native_reason
from asaql.spark.operators.native_step import NativeStep
from asaql.spark.operators.outputs import OutputLines, event_lines, window_lines
from asaql.spark.sources.declared_schema import declared_struct
from asaql.spark.sources.ordered_files import GROUPS_FILE, ordered_files
from asaql.spark.sources.io import whole_files
from asaql.spark.sources.step_input import (
    apply_step, declared_of, ordered_reading, policy_settings, read_source, record_json,
    stamp_events,
)
from asaql.spark.text_select import quoted, select_text


@dataclass
class SourceGroup:
    """Statements that share one input read and one stateful step."""

    source: PlanNode
    writes: list[WriteOutput] = field(default_factory=list)

    @property
    def input_alias(self) -> str:
        return source_alias(self.source)

    @property
    def windowed(self) -> list[WriteOutput]:
        return [w for w in self.writes if is_windowed(w)]

    @property
    def held(self) -> list[WriteOutput]:
        """Statements whose events go out in order, once the watermark passes them: those with
        analytic functions, and those that write a stage (its reader closes on the watermark)."""
        return [w for w in self.writes if not is_windowed(w)
                and (analytics_below(w) is not None or is_stage(w.output))]

    @property
    def ordered(self) -> bool:
        """Whether anything waits for the watermark (windows, held events)."""
        return bool(self.windowed or self.held)

    @property
    def writes_stage(self) -> bool:
        return any(is_stage(w.output) for w in self.writes)

    @property
    def stateful(self) -> bool:
        """A stage's rows go through the step too: it gives them their System.Timestamp and
        reads the producer's watermark lines as control records, not events."""
        return isinstance(self.source, (ApplyEventOrdering, ReadStage)) or self.ordered

    @property
    def scope(self) -> str:
        return watermark_scope(self.source)


def group_by_source(plan: Plan) -> list["SourceGroup | JoinGroup"]:
    """Statements that share a read and a stateful step: those over the same timestamped input,
    or over the same JOIN of two streams."""
    groups: dict = {}
    for write in plan.outputs:
        join = stream_join_below(write)
        if join is not None:
            groups.setdefault(join, JoinGroup(join)).writes.append(write)
            continue
        source = timestamped_source(write)
        groups.setdefault(source, SourceGroup(source)).writes.append(write)
    return list(groups.values())


def partitions_wanted(group: "SourceGroup | JoinGroup") -> tuple[str, ...]:
    """The inputs of `group` whose partitions its watermarks wait for (discover_partitions):
    a JOIN's over combined partitions; an input's timestamped over combined partitions, or
    when it writes a stage. Never a stage's."""
    if isinstance(group, JoinGroup):
        aliases = group.aliases if group.scope == "combined" else ()
    else:
        aliases = (group.input_alias,) if group.ordered and (
            group.scope == "combined" or group.writes_stage) else ()
    return tuple(a for a in aliases if not is_stage(a))


@dataclass
class LoweredGroup:
    stream: DataFrame  # the step's output rows (or the events, without a step)
    outputs: list[tuple[WriteOutput, "OutputLines"]]
    # The native step (native_step.py): `stream` is then the step's input, and each micro-batch
    # becomes the step's output rows through `batch_step(batch, batch_id)` in foreachBatch.
    batch_step: "NativeBatch | None" = None


@dataclass
class NativeBatch:
    """A micro-batch of the step's input → the rows the outputs read (native_step.py)."""

    step: NativeStep
    renames: dict
    # The step's input over the files ordered_files.py reads (its groups file names each
    # micro-batch's), when the stream's micro-batches are the files themselves; else None.
    ordered: DataFrame | None = None

    @property
    def whole(self) -> bool:
        """Whether the stream's micro-batches are whole files, which `ordered` reads."""
        return self.ordered is not None

    def __call__(self, batch: DataFrame, batch_id: int, passes: int = 0,
                 groups: list | None = None) -> DataFrame | None:
        stepped = self.step(batch, batch_id, passes, groups)
        return None if stepped is None else _named_back(stepped, self.renames)

    @property
    def counts(self) -> dict | None:
        return self.step.counts

    @property
    def local_parts(self) -> list[DataFrame] | None:
        """The last micro-batch's rows as local frames, when all of them are (NativeStep)."""
        parts = self.step.local_parts
        return None if parts is None else [_named_back(part, self.renames) for part in parts]

    @property
    def fusable(self) -> bool:
        return self.step.fusable

    @property
    def folder(self):
        return self.step.folder

    @property
    def seeded(self) -> bool:
        """Whether the step's one pass needs each file's seeds of the out-of-order rule (with
        TIMESTAMP BY; not by arrival time)."""
        return self.step.seeded

    @property
    def fused(self) -> bool:
        """Whether the last micro-batch took the fused pass (then `settle` follows it)."""
        return self.step.pending is not None

    def settle(self) -> dict | None:
        return self.step.settle()

    def release(self) -> None:
        self.step.release()


def lower_group(spark: SparkSession, group: SourceGroup, path: str, schema: T.StructType,
                control: str, max_files_per_trigger: int | None,
                partitions: "tuple | Callable[[], tuple]", buckets: int,
                references: dict | None = None, events: DataFrame | None = None,
                typed: bool | frozenset = False, native_folder: str | None = None,
                fmt: InputFormat | None = None, jvm: bool = False,
                sample: str | None = None, by_files: bool = True) -> LoweredGroup:
    """`references`: the reference data tables by input name (lower case). `events`: the
    input's events already read (the embedding API), instead of reading `path`. `typed`: each
    output line is a struct of typed columns instead of its JSON text (the embedding API), or
    the lines of the outputs it names (database tables).
    `native_folder`: where the native step keeps its state, when the step can take that path
    (native_step.py); otherwise the general step runs. `fmt`: the input's declared format
    (--input-format), else its files' extension. `jvm`: the JVM engine reads the records.
    `sample`: the record type the schema's sample gave, each event checked against it.
    `by_files`: the native step may read the micro-batches' JSON-lines files itself (False:
    the stream's events, when the native step turned out not to apply). `partitions`: the
    input's partitions the watermarks wait for, or the job that discovers them, which the
    native step reading the files spares when its first pass finds them (a sampled schema's
    run: one micro-batch reads every file)."""
    references, given_schema = references or {}, schema
    whole = None  # the stream of whole files, when the step reads them itself (below)
    if events is None and by_files and native_folder is not None and jvm and group.stateful \
            and not group.held and ordered_reading(group.source, path, fmt) \
            and general_step_reason(group.source, group.writes) is None:
        # The step will read each micro-batch's files itself (ordered_files.py): the stream
        # carries only the files, and the events are lowered once, over that reading.
        whole = whole_files(spark, path, control, max_files_per_trigger)
        events = read_source(spark, group.source, path, schema, control, None, fmt, jvm,
                             files=ordered_files(spark, os.path.join(native_folder, GROUPS_FILE)),
                             sample=sample, found=callable(partitions))
    elif events is None:
        events = read_source(spark, group.source, path, schema, control, max_files_per_trigger,
                             fmt, jvm, sample=sample)
    discover = partitions if callable(partitions) and whole is not None else None
    if callable(partitions) and whole is None:
        partitions = partitions()
    schema = declared_struct(schema, declared_of(group.source))
    scope = Scope(schema, frame=events)
    scope.references = references
    if not group.stateful:
        stream = events.where(F.col(C.CONTROL).isNull()).select(
            "*", F.col(C.PARTITION).cast("string").alias(C.KEY),
            F.col(C.ARRIVAL).alias(C.SYSTEM_TIMESTAMP), F.lit(0).alias(C.FLAGS),
            F.lit(C.EVENT).alias(C.ROW_KIND))
        return LoweredGroup(stream, [(w, event_lines(w, stream, schema, references,
                                                      typed=_typed(typed, w.output), jvm=jvm))
                                     for w in group.writes])
    source = group.source
    stamped = stamp_events(events, source, scope, jvm)
    windowed = _shared_windows(group.windowed, stamped, scope, record_json(schema))
    passthrough = [w for w in group.writes if not is_windowed(w) and w not in group.held]
    calls = list(dict.fromkeys(c for w in group.held if analytics_below(w) is not None
                               for c in analytics_below(w).calls))
    analytics = lower_analytics(calls, stamped, scope, record_json(schema),
                                per_key=group.scope != "combined")
    needs_payload = passthrough or group.held
    payload = [c for c in stamped.columns if c not in C.INTERNAL] if needs_payload else []
    # Payload fields travel under positional names: the pandas path renames names starting with
    # '_' (a field such as `_id`) and would break them.
    renames = {name: f"asaql__p{i}" for i, name in enumerate(payload)}
    # One bucket when a watermark is a minimum over all partitions (combined, or a stage's)
    combined = (group.scope == "combined" or group.writes_stage) and group.ordered
    bucket = F.lit(0) if combined else F.pmod(F.hash(F.col(C.KEY)), F.lit(buckets))
    every_bucket = F.sequence(F.lit(0), F.lit(0 if combined else buckets - 1))

    def step_input_of(stamped: DataFrame) -> DataFrame:
        return stamped.select(
            *[F.col(f"`{old}`").alias(new) for old, new in renames.items()],
            C.FILE, C.LINE, C.ARRIVAL, C.PARTITION, C.ERROR, C.RAW, C.EVENT_TIME, C.KEY,
            C.CONTROL, *([C.FOUND_PARTITION, C.FOUND_ARRIVAL] if discover is not None else []),
            *[column.alias(name) for s in _distinct(windowed) for name, column in s.inputs.items()],
            *[column.alias(name) for name, column in analytics.inputs.items()],
            F.explode(F.when(F.col(C.CONTROL).isNotNull(), every_bucket)
                      .otherwise(F.array(bucket))).alias(C.BUCKET),
        )

    step_input = step_input_of(stamped)
    event = (*renames.values(), C.FILE, C.LINE, C.ARRIVAL, C.PARTITION, C.KEY)
    event_columns = event if passthrough else ()
    held = (*event, *analytics.inputs) if group.held else ()
    out_schema = _step_schema(step_input, (*event_columns, *event) if group.held
                              else event_columns, _distinct(windowed), analytics.result_fields)
    spec = StepSpec(
        policy=policy_settings(source), scope=group.scope,
        partitions=None if discover is not None else partitions,
        event_columns=event_columns, statements=tuple(s.spec for s in _distinct(windowed)),
        output_columns=tuple(out_schema.fieldNames()), analytics=analytics.specs,
        held_columns=held, analytic_inputs=tuple(analytics.inputs),
        upstream=isinstance(source, ReadStage), writes_stage=group.writes_stage)
    batch_step = None
    types = {f.name: f.dataType for f in step_input.schema.fields}
    reason = native_reason(spec, types, exact_sums=jvm)
    if native_folder is not None and os.path.isdir(native_folder) and reason is not None:
        # the checkpoint's windows are the native step's: the general step would start empty
        raise ConfigurationError(
            f"this checkpoint's windows were kept by the native step, which cannot run them "
            f"now: {reason} (run it with the JVM engine, as it started)")
    if whole is not None and reason is not None:  # the general step reads the stream's events
        return lower_group(spark, group, path, given_schema, control, max_files_per_trigger,
                           partitions, buckets, references, None, typed, native_folder, fmt,
                           jvm, sample, by_files=False)
    if whole is not None or (native_folder is not None and step_input.isStreaming
                             and general_step_reason(source, group.writes) is None
                             and reason is None):
        batch_step = NativeBatch(NativeStep(spec, out_schema, native_folder,
                                            floating_columns(spec, types), scan=jvm,
                                            discover=discover), renames,
                                 None if whole is None else step_input)
        step_input = step_input if whole is None else whole
        # the outputs are lowered over the step's output columns, which each batch will have
        stream = _named_back(spark.createDataFrame([], out_schema), renames)
    else:
        stream = _named_back(apply_step(step_input, SourceStep(spec), out_schema), renames)
    outputs = [(w, event_lines(w, stream, schema, references, typed=_typed(typed, w.output),
                               jvm=jvm)) for w in passthrough]
    outputs += [(w, event_lines(w, stream, schema, references, analytics.results,
                                typed=_typed(typed, w.output), jvm=jvm)) for w in group.held]
    outputs += [(s.write, window_lines(s, stream, schema, _typed(typed, s.write.output), jvm))
                for s in windowed]
    if batch_step is not None:
        return LoweredGroup(step_input, outputs, batch_step)
    return LoweredGroup(stream, outputs)


def _named_back(stepped: DataFrame, renames: dict) -> DataFrame:
    """The step's output with the payload fields under their own names again."""
    return select_text(stepped, [
        *[f"{quoted(new)} AS {quoted(old)}" for old, new in renames.items()],
        *[quoted(c) for c in stepped.columns if c not in renames.values()]])


def _shared_windows(writes: list[WriteOutput], stamped: DataFrame, scope: Scope,
                    record) -> list[WindowedStatement]:
    """Each windowed write's statement. Writes over the same windows (one step's, read by
    several outputs, each with its own HAVING/WHERE and SELECT over them) share one statement of
    the step: its windows are kept and aggregated once, and each write reads their results."""
    prepared: dict = {}
    statements = []
    for position, write in enumerate(writes):
        aggregate = split_windowed(write)[2]
        if aggregate not in prepared:
            # numbered by position, as before sharing: a statement's state in a checkpoint
            # written by an earlier version keeps its number
            prepared[aggregate] = prepare(position, write, stamped, scope, record)
            statements.append(prepared[aggregate])
            continue
        project, having, _, _ = split_windowed(write)
        statements.append(replace(prepared[aggregate], write=write, project=project,
                                  having=having))
    return statements


def _distinct(windowed: list[WindowedStatement]) -> list[WindowedStatement]:
    """The step's statements: one per index (writes sharing windows share one)."""
    first: dict[int, WindowedStatement] = {}
    for statement in windowed:
        first.setdefault(statement.index, statement)
    return list(first.values())


def _step_schema(step_input: DataFrame, event_columns, windowed: list[WindowedStatement],
                 analytic_fields: list[T.StructField]) -> T.StructType:
    types = {f.name: f.dataType for f in step_input.schema.fields}
    fields = [T.StructField(C.ROW_KIND, T.IntegerType()), T.StructField(C.STATEMENT, T.IntegerType())]
    for name in dict.fromkeys((*event_columns, C.FILE, C.LINE, C.ERROR, C.RAW, C.KEY)):
        fields.append(T.StructField(name, types[name], True))
    fields += [T.StructField(C.SYSTEM_TIMESTAMP, T.TimestampType()),
               T.StructField(C.FLAGS, T.IntegerType())]
    for statement in windowed:
        fields += statement.result_fields
    fields += analytic_fields
    fields += [T.StructField(name, T.LongType()) for name in (*C.COUNT_COLUMNS, C.OUT_WATERMARK)]
    fields += [T.StructField(name, T.StringType()) for name in C.METRIC_COLUMNS]
    return T.StructType(fields)


def lower_join_group(spark: SparkSession, group: JoinGroup, paths: tuple, schemas: tuple,
                     controls: tuple, max_files_per_trigger: int | None, partitions: tuple,
                     buckets: int, references: dict | None = None,
                     counted: tuple | None = None, events: tuple | None = None,
                     typed: bool | frozenset = False, formats: tuple | None = None,
                     jvm: bool = False) -> LoweredGroup:
    """A JOIN of streams: one step over all its inputs (asaql/spark/operators/joins.py), then
    each statement's lines from the left events and their partners. Per side, the left first:
    `paths`, `schemas`, `controls`, `partitions`, `formats` (each input's declared format, None:
    its files' extension); `jvm`: the JVM engine reads the records."""
    stream, partners = join_stream(spark, group, paths, schemas, controls,
                                   max_files_per_trigger, partitions, buckets, counted, events,
                                   formats, jvm)
    return LoweredGroup(stream, [(w, event_lines(w, stream, schemas[0], references,
                                                 partners=partners,
                                                 typed=_typed(typed, w.output), jvm=jvm))
                                 for w in group.writes])


def _typed(typed: bool | frozenset, output: str) -> bool:
    """`typed`: every output's lines as structs of typed columns (the embedding API), or the
    outputs named (a database table's rows, written as columns rather than JSON text)."""
    return typed if isinstance(typed, bool) else output in typed
