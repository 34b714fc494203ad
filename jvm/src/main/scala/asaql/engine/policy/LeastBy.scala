package asaql.engine

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.types.{DataType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/** The least row's keys (longs and texts, compared in order) and its value. */
final class LeastRow(var keys: Array[Any], var value: UTF8String)

/** asaql_least_by(value, key...): the text `value` of the row whose keys (LONG or STRING,
  * compared in order) are least, among the rows whose first key is not NULL; NULL when there
  * is none. What `min_by(value, struct(key...))` gives, without its cost: Spark's aggregate
  * copies the least row's struct into its buffer again at every row once it holds one; here a
  * row that is no candidate costs one key's evaluation. (The first late event of a
  * micro-batch, step_stats.py.) */
case class LeastBy(children: Seq[Expression], mutableAggBufferOffset: Int = 0,
                   inputAggBufferOffset: Int = 0) extends TypedImperativeAggregate[LeastRow] {

  override def checkInputDataTypes(): TypeCheckResult =
    if (children.length < 2 || children.head.dataType != StringType)
      TypeCheckResult.TypeCheckFailure(s"${LeastBy.Name} takes a text value and its keys")
    else children.tail.find(k => k.dataType != LongType && k.dataType != StringType) match {
      case Some(k) => TypeCheckResult.TypeCheckFailure(
        s"${LeastBy.Name} compares LONG and STRING keys, not ${k.dataType}")
      case None => TypeCheckResult.TypeCheckSuccess
    }

  override def dataType: DataType = StringType
  override def nullable: Boolean = true
  override def prettyName: String = LeastBy.Name

  @transient private lazy val keys = children.tail.toArray
  @transient private lazy val texts = keys.map(_.dataType == StringType)

  override def createAggregationBuffer(): LeastRow = new LeastRow(null, null)

  override def update(buffer: LeastRow, input: InternalRow): LeastRow = {
    val first = keys(0).eval(input)
    if (first == null) return buffer
    val row = new Array[Any](keys.length)
    row(0) = first
    var i = 1
    while (i < keys.length) {
      row(i) = keys(i).eval(input)
      i += 1
    }
    if (buffer.keys == null || less(row, buffer.keys)) {
      // the row's texts live in a buffer the next row reuses
      i = 0
      while (i < row.length) {
        row(i) = row(i) match {
          case text: UTF8String => text.copy()
          case other => other
        }
        i += 1
      }
      buffer.keys = row
      val value = children.head.eval(input).asInstanceOf[UTF8String]
      buffer.value = if (value == null) null else value.copy()
    }
    buffer
  }

  /** Keys in order, NULL first (as a struct's ordering). */
  private def less(a: Array[Any], b: Array[Any]): Boolean = {
    var i = 0
    while (i < a.length) {
      val order = (a(i), b(i)) match {
        case (null, null) => 0
        case (null, _) => -1
        case (_, null) => 1
        case (x: UTF8String, y: UTF8String) => x.binaryCompare(y)
        case (x, y) => java.lang.Long.compare(x.asInstanceOf[Long], y.asInstanceOf[Long])
      }
      if (order != 0) return order < 0
      i += 1
    }
    false
  }

  override def merge(buffer: LeastRow, input: LeastRow): LeastRow =
    if (input.keys != null && (buffer.keys == null || less(input.keys, buffer.keys))) input
    else buffer

  override def eval(buffer: LeastRow): Any = buffer.value

  override def serialize(buffer: LeastRow): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    out.writeBoolean(buffer.keys != null)
    if (buffer.keys != null) {
      buffer.keys.foreach { key =>
        out.writeBoolean(key != null)
        key match {
          case null =>
          case text: UTF8String => writeText(out, text)
          case number => out.writeLong(number.asInstanceOf[Long])
        }
      }
      out.writeBoolean(buffer.value != null)
      if (buffer.value != null) writeText(out, buffer.value)
    }
    out.flush()
    bytes.toByteArray
  }

  override def deserialize(bytes: Array[Byte]): LeastRow = {
    val in = new DataInputStream(new ByteArrayInputStream(bytes))
    if (!in.readBoolean()) return new LeastRow(null, null)
    val row = texts.map(text => if (!in.readBoolean()) null
                                else if (text) readText(in) else in.readLong(): Any)
    new LeastRow(row, if (in.readBoolean()) readText(in) else null)
  }

  private def writeText(out: DataOutputStream, text: UTF8String): Unit = {
    val bytes = text.getBytes
    out.writeInt(bytes.length)
    out.write(bytes)
  }

  private def readText(in: DataInputStream): UTF8String = {
    val bytes = new Array[Byte](in.readInt())
    in.readFully(bytes)
    UTF8String.fromBytes(bytes)
  }

  override def withNewMutableAggBufferOffset(offset: Int): LeastBy =
    copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): LeastBy =
    copy(inputAggBufferOffset = offset)
  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): LeastBy =
    copy(children = c)
}

object LeastBy {
  val Name = "asaql_least_by"
}
