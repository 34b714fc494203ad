package asaql.engine

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}
import java.util.{HashMap => JHashMap}

import com.fasterxml.jackson.core.JsonFactory

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, MutableProjection,
  SpecificInternalRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/** Per group: one value per aggregated column (a Long, or absent before any non-NULL value). */
final class GroupedValues(size: Int, val parts: Array[AnyRef]) {
  val values = new Array[Long](size)
  val seen = new Array[Boolean](size)
}

/** A group's values as the aggregate reads them (UTF8String, Integer, Long; NULL), compared
  * by value. A row's probe holds the row's own strings; a stored key, copies. */
final class GroupKey(val parts: Array[AnyRef]) {
  override val hashCode: Int = java.util.Arrays.hashCode(parts)
  override def equals(other: Any): Boolean = other match {
    case key: GroupKey => key.hashCode == hashCode && java.util.Arrays.equals(parts, key.parts)
    case _ => false
  }
}

/** The groups seen, each with its values. The rows of one group often come one after the
  * other, so the group of the row before is compared first; a key is copied only when it is
  * new (a row's strings live in a buffer the next row reuses). */
final class GroupedBuffer(val ops: Array[Char]) {
  val groups = new JHashMap[GroupKey, GroupedValues]()
  private var last: GroupedValues = _

  private var scratch: Array[AnyRef] = _

  /** An array for a row's group as `entry` reads it, the same one row after row (`entry`
    * keeps a copy, never this array). */
  def probe(size: Int): Array[AnyRef] = {
    if (scratch == null || scratch.length != size) scratch = new Array[AnyRef](size)
    scratch
  }

  def entry(raw: Array[AnyRef]): GroupedValues = {
    if (last != null && java.util.Arrays.equals(raw, last.parts)) return last
    var found = groups.get(new GroupKey(raw))
    if (found == null) {
      val parts = raw.map {
        case text: UTF8String => text.copy()
        case other => other
      }
      found = new GroupedValues(ops.length, parts)
      groups.put(new GroupKey(parts), found)
    }
    last = found
    found
  }

  def add(into: GroupedValues, column: Int, value: Long): Unit = {
    if (!into.seen(column)) {
      into.seen(column) = true
      into.values(column) = value
    } else ops(column) match {
      case GroupedStats.Max => if (value > into.values(column)) into.values(column) = value
      case GroupedStats.Min => if (value < into.values(column)) into.values(column) = value
      case _ => into.values(column) += value
    }
  }

  def merge(other: GroupedBuffer): Unit = other.groups.forEach { (key, values) =>
    var mine = groups.get(key)
    if (mine == null) {
      mine = new GroupedValues(ops.length, key.parts)
      groups.put(key, mine)
    }
    var i = 0
    while (i < ops.length) {
      if (values.seen(i)) add(mine, i, values.values(i))
      i += 1
    }
  }

  def toBytes: Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    out.writeInt(groups.size)
    groups.forEach { (key, values) =>
      key.parts.foreach { part =>
        out.writeBoolean(part != null)
        if (part != null) out.writeUTF(part.toString)
      }
      var i = 0
      while (i < ops.length) {
        out.writeBoolean(values.seen(i))
        out.writeLong(values.values(i))
        i += 1
      }
    }
    out.flush()
    bytes.toByteArray
  }

  /** [[group..., value...], ...]: groups as JSON strings (or null), values as numbers. */
  def toJson: String = {
    val text = new java.io.StringWriter()
    val json = new JsonFactory().createGenerator(text)
    json.writeStartArray()
    groups.forEach { (key, values) =>
      json.writeStartArray()
      key.parts.foreach(part => if (part == null) json.writeNull() else json.writeString(part.toString))
      var i = 0
      while (i < ops.length) {
        if (values.seen(i)) json.writeNumber(values.values(i)) else json.writeNull()
        i += 1
      }
      json.writeEndArray()
    }
    json.writeEndArray()
    json.close()
    text.toString
  }
}

object GroupedBuffer {
  /** `types`: each group's type, to read its text back as the aggregate reads the value. */
  def read(ops: Array[Char], types: Array[DataType], bytes: Array[Byte]): GroupedBuffer = {
    val buffer = new GroupedBuffer(ops)
    val in = new DataInputStream(new ByteArrayInputStream(bytes))
    val count = in.readInt()
    var n = 0
    while (n < count) {
      val parts = new Array[AnyRef](types.length)
      var g = 0
      while (g < types.length) {
        parts(g) = if (in.readBoolean()) GroupedStats.typed(types(g), in.readUTF()) else null
        g += 1
      }
      val values = new GroupedValues(ops.length, parts)
      var i = 0
      while (i < ops.length) {
        values.seen(i) = in.readBoolean()
        values.values(i) = in.readLong()
        i += 1
      }
      buffer.groups.put(new GroupKey(parts), values)
      n += 1
    }
    buffer
  }
}

/** asaql_grouped(ops, group..., value...): a grouped aggregate in one value, for what Spark's
  * `observe` collects beside a write (it takes aggregates, not GROUP BY): per distinct group
  * (the first `groups` arguments, as text) the MAX ('x'), MIN ('n') or SUM ('s') of each value
  * (`ops`: one letter per value, a literal; values are integers, NULLs skipped) → a JSON
  * array of [group..., value...] rows. The micro-batch's per-key statistics and its arrival
  * segments come out of the pass that writes its rows, with no job of their own. */
case class GroupedStats(ops: String, groups: Int, children: Seq[Expression],
                        mutableAggBufferOffset: Int = 0, inputAggBufferOffset: Int = 0)
  extends TypedImperativeAggregate[GroupedBuffer] {

  private val opChars = ops.toCharArray

  override def checkInputDataTypes(): TypeCheckResult = {
    val values = children.drop(groups)
    if (values.length != opChars.length || opChars.exists(c => !"xns".contains(c)))
      TypeCheckResult.TypeCheckFailure(s"${GroupedStats.Name}: one of x, n, s per value")
    else values.find(v => v.dataType != LongType && v.dataType != IntegerType) match {
      case Some(v) => TypeCheckResult.TypeCheckFailure(
        s"${GroupedStats.Name} takes integer values, not ${v.dataType}")
      case None => TypeCheckResult.TypeCheckSuccess
    }
  }
  override def dataType: DataType = StringType
  override def nullable: Boolean = false
  override def prettyName: String = GroupedStats.Name

  override def createAggregationBuffer(): GroupedBuffer = new GroupedBuffer(opChars)

  /** The groups and values of a row, computed by one generated projection per task (the
    * aggregate's arguments evaluated one by one in the interpreter, each value boxed, took a
    * fifth of the one pass's time) into a row of its own, reused, each value in its slot: an
    * UnsafeRow written through its offsets and read back took a tenth of a pass (JFR,
    * docs/speed.md). */
  @transient private lazy val arguments: MutableProjection =
    MutableProjection.create(children).target(new SpecificInternalRow(children.map(_.dataType)))
  @transient private lazy val groupTypes = children.take(groups).map(_.dataType).toArray
  @transient private lazy val longValues = children.drop(groups).map(_.dataType == LongType).toArray

  override def update(buffer: GroupedBuffer, input: InternalRow): GroupedBuffer = {
    val row = arguments(input)
    val types = groupTypes  // lazy vals read once per row, not once per column
    val longs = longValues
    val raw = buffer.probe(groups)
    var g = 0
    while (g < groups) {
      raw(g) = if (row.isNullAt(g)) null else types(g) match {
        case StringType => row.getUTF8String(g)
        case LongType => java.lang.Long.valueOf(row.getLong(g))
        case IntegerType => Integer.valueOf(row.getInt(g))
        case other => GroupedStats.keyed(other, row.get(g, other))
      }
      g += 1
    }
    val entry = buffer.entry(raw)
    var i = 0
    while (i < opChars.length) {
      val at = groups + i
      if (!row.isNullAt(at)) buffer.add(entry, i,
        if (longs(i)) row.getLong(at) else row.getInt(at).toLong)
      i += 1
    }
    buffer
  }

  override def merge(buffer: GroupedBuffer, input: GroupedBuffer): GroupedBuffer = {
    buffer.merge(input)
    buffer
  }

  override def eval(buffer: GroupedBuffer): Any = UTF8String.fromString(buffer.toJson)
  override def serialize(buffer: GroupedBuffer): Array[Byte] = buffer.toBytes
  override def deserialize(bytes: Array[Byte]): GroupedBuffer =
    GroupedBuffer.read(opChars, children.take(groups).map(_.dataType).toArray, bytes)

  override def withNewMutableAggBufferOffset(offset: Int): GroupedStats =
    copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): GroupedStats =
    copy(inputAggBufferOffset = offset)
  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): GroupedStats =
    copy(children = c)
}

object GroupedStats {
  val Name = "asaql_grouped"
  val Max = 'x'
  val Min = 'n'
  val Sum = 's'

  /** A group's value as a key: strings, integers and longs as they are (their text is the
    * group's name), any other type by its text. */
  def keyed(kind: DataType, value: Any): AnyRef = kind match {
    case StringType | IntegerType | LongType => value.asInstanceOf[AnyRef]
    case _ => UTF8String.fromString(value.toString)
  }

  /** A group's text, read back (GroupedBuffer.read) as `keyed` made it. */
  def typed(kind: DataType, text: String): AnyRef = kind match {
    case IntegerType => Integer.valueOf(text)
    case LongType => java.lang.Long.valueOf(text)
    case _ => UTF8String.fromString(text)
  }
}
