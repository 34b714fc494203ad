package asaql.engine

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}
import java.util.{HashMap => JHashMap}

import com.fasterxml.jackson.core.JsonFactory

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/** Per group: one value per aggregated column (a Long, or absent before any non-NULL value). */
final class GroupedValues(size: Int) {
  val values = new Array[Long](size)
  val seen = new Array[Boolean](size)
}

/** The groups seen, each with its values. The rows of one group usually come one after the
  * other (a task reads a file's events of a key together), so the group of the row before is
  * compared first and a new key is made only when the group changes. */
final class GroupedBuffer(val ops: Array[Char]) {
  val groups = new JHashMap[java.util.List[String], GroupedValues]()
  private var lastRaw: Array[Any] = _
  private var last: GroupedValues = _

  def entry(raw: Array[Any]): GroupedValues = {
    if (last != null && java.util.Arrays.equals(raw.asInstanceOf[Array[AnyRef]],
        lastRaw.asInstanceOf[Array[AnyRef]])) return last
    val key = java.util.Arrays.asList(raw.map(v => if (v == null) null else v.toString): _*)
    var found = groups.get(key)
    if (found == null) {
      found = new GroupedValues(ops.length)
      groups.put(key, found)
    }
    lastRaw = raw.map {
      case text: UTF8String => text.copy()
      case other => other
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
      mine = new GroupedValues(ops.length)
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
      key.forEach { part =>
        out.writeBoolean(part != null)
        if (part != null) out.writeUTF(part)
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
      key.forEach(part => if (part == null) json.writeNull() else json.writeString(part))
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
  def read(ops: Array[Char], groupCount: Int, bytes: Array[Byte]): GroupedBuffer = {
    val buffer = new GroupedBuffer(ops)
    val in = new DataInputStream(new ByteArrayInputStream(bytes))
    val count = in.readInt()
    var n = 0
    while (n < count) {
      val key = new java.util.ArrayList[String](groupCount)
      var g = 0
      while (g < groupCount) {
        key.add(if (in.readBoolean()) in.readUTF() else null)
        g += 1
      }
      val values = new GroupedValues(ops.length)
      var i = 0
      while (i < ops.length) {
        values.seen(i) = in.readBoolean()
        values.values(i) = in.readLong()
        i += 1
      }
      buffer.groups.put(java.util.Collections.unmodifiableList(key), values)
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

  override def update(buffer: GroupedBuffer, input: InternalRow): GroupedBuffer = {
    val raw = new Array[Any](groups)
    var g = 0
    while (g < groups) {
      raw(g) = children(g).eval(input)
      g += 1
    }
    val entry = buffer.entry(raw)
    var i = 0
    while (i < opChars.length) {
      val child = children(groups + i)
      val value = child.eval(input)
      if (value != null) buffer.add(entry, i, value match {
        case n: java.lang.Integer => n.longValue
        case n: java.lang.Long => n.longValue
      })
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
    GroupedBuffer.read(opChars, groups, bytes)

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
}
