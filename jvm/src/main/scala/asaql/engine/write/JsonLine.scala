package asaql.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.json.StructsToJsonEvaluator
import org.apache.spark.sql.types.{DataType, StringType, StructType}
import org.apache.spark.unsafe.types.UTF8String

/** An output row as its JSON line: what `to_json(struct, map('ignoreNullFields', 'false'))`
  * gives, byte for byte. A row of text, numbers, booleans and NULLs is written here in one
  * loop (Spark's writer goes through a Java string per value, Jackson's generator and a
  * string per line: a twelfth of a pass-through's pass); a value whose text would need
  * Jackson's care (an escape, a character beyond ASCII, NaN or an infinity) and any other
  * row's type take Spark's own `to_json` for the whole line, so the text is always Spark's. */
case class JsonLine(child: Expression, timeZoneId: String) extends OwnMethodCode {

  override def checkInputDataTypes(): TypeCheckResult = child.dataType match {
    case _: StructType => TypeCheckResult.TypeCheckSuccess
    case other => TypeCheckResult.TypeCheckFailure(s"${JsonLine.Name} takes a struct, not $other")
  }

  override def dataType: DataType = StringType
  override def nullable: Boolean = child.nullable

  private def fields = child.dataType.asInstanceOf[StructType].fields

  @transient private lazy val sparks = StructsToJsonEvaluator(
    Map("ignoreNullFields" -> "false"), child.dataType, Some(timeZoneId))
  // each field's kind, and its name as the line writes it: `"name":`; null: Spark's always
  @transient private lazy val kinds: Array[Int] = {
    val found = fields.map(f => ScalarKind.of(f.dataType))
    val named = fields.forall(f => JsonLine.plain(UTF8String.fromString(f.name)))
    if (found.contains(ScalarKind.Other) || !named) null
    else found
  }
  @transient private lazy val names: Array[Array[Byte]] = fields.zipWithIndex.map {
    case (f, i) => ((if (i == 0) "{\"" else ",\"") + f.name + "\":").getBytes("US-ASCII")
  }
  @transient private lazy val out = new Growing

  def line(row: InternalRow): UTF8String = {
    val fast = if (kinds == null) null else written(row)
    if (fast != null) fast else sparks.evaluate(row).asInstanceOf[UTF8String]
  }

  private def written(row: InternalRow): UTF8String = {
    out.size = 0
    var i = 0
    while (i < kinds.length) {
      out.append(names(i))
      if (row.isNullAt(i)) out.append(JsonLine.Null)
      else kinds(i) match {
        case ScalarKind.Text =>
          val text = row.getUTF8String(i)
          if (!JsonLine.plain(text)) return null
          out.add('"')
          out.raw(text)
          out.add('"')
        case ScalarKind.Long => out.ascii(java.lang.Long.toString(row.getLong(i)))
        case ScalarKind.Int => out.ascii(Integer.toString(row.getInt(i)))
        case ScalarKind.Short => out.ascii(Integer.toString(row.getShort(i)))
        case ScalarKind.Byte => out.ascii(Integer.toString(row.getByte(i)))
        case ScalarKind.Double =>
          val value = row.getDouble(i)
          if (value.isNaN || value.isInfinite) return null
          out.ascii(java.lang.Double.toString(value))
        case ScalarKind.Float =>
          val value = row.getFloat(i)
          if (value.isNaN || value.isInfinite) return null
          out.ascii(java.lang.Float.toString(value))
        case ScalarKind.Bool => out.append(if (row.getBoolean(i)) JsonLine.True else JsonLine.False)
        case _ => out.append(JsonLine.Null)  // NullType: no value ever
      }
      i += 1
    }
    if (kinds.isEmpty) out.add('{')
    out.add('}')
    UTF8String.fromBytes(java.util.Arrays.copyOf(out.bytes, out.size))
  }

  override protected def ownMethod: String = "line"
  override protected def evaluated(value: Any): Any = line(value.asInstanceOf[InternalRow])

  override protected def withNewChildInternal(newChild: Expression): JsonLine =
    copy(child = newChild)

  override def prettyName: String = JsonLine.Name
}

object JsonLine {
  val Name = "asaql_json_line"
  private val Null = "null".getBytes("US-ASCII")
  private val True = "true".getBytes("US-ASCII")
  private val False = "false".getBytes("US-ASCII")

  /** Printable ASCII without '"' or '\': Jackson writes such text as it is. */
  def plain(text: UTF8String): Boolean = {
    val base = text.getBaseObject
    val offset = text.getBaseOffset
    var i = 0
    while (i < text.numBytes) {
      val b = org.apache.spark.unsafe.Platform.getByte(base, offset + i)
      if (b < 0x20 || b > 0x7e || b == '"' || b == '\\') return false
      i += 1
    }
    true
  }
}
