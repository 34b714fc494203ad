package asaql.engine

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import com.fasterxml.jackson.core.{JsonFactory, JsonParser, JsonToken}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.json.JSONOptions
import org.apache.spark.sql.types.{DataType, StringType}
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** A value's type as Spark's JSON inference merges it, and whether the merge ever met two
  * types that disagree (`Mixed`: Spark's text, where ASA keeps each event's own type). */
sealed trait Kind
object Kind {
  case object Null extends Kind
  case object Bool extends Kind
  case object Long extends Kind
  case object Double extends Kind
  final case class Dec(precision: Int, scale: Int) extends Kind
  case object Text extends Kind
  case object Mixed extends Kind
  /** Fields sorted by name (Java's String order), a name given twice kept twice, as Spark. */
  final case class Record(fields: Vector[(String, Kind)]) extends Kind
  final case class Items(element: Kind) extends Kind

  private val MaxPrecision = 38
  private val LongDecimal = Dec(20, 0)

  /** JsonInferSchema.compatibleType, with `Mixed` where it falls back to text. */
  def merge(a: Kind, b: Kind): Kind = (a, b) match {
    case _ if a == b => a
    case (Null, _) => b
    case (_, Null) => a
    case (Mixed, _) | (_, Mixed) => Mixed
    case (Long, Double) | (Double, Long) => Double
    case (Double, _: Dec) | (_: Dec, Double) => Double
    case (Long, d: Dec) => merge(LongDecimal, d)
    case (d: Dec, Long) => merge(d, LongDecimal)
    case (x: Dec, y: Dec) =>
      val scale = math.max(x.scale, y.scale)
      val whole = math.max(x.precision - x.scale, y.precision - y.scale)
      if (whole + scale > MaxPrecision) Double else Dec(whole + scale, scale)
    case (Record(x), Record(y)) => Record(mergeFields(x, y))
    case (Items(x), Items(y)) => Items(merge(x, y))
    case _ => Mixed
  }

  private def mergeFields(x: Vector[(String, Kind)], y: Vector[(String, Kind)]) = {
    val merged = Vector.newBuilder[(String, Kind)]
    var i = 0
    var j = 0
    while (i < x.length && j < y.length) {
      val order = x(i)._1.compareTo(y(j)._1)
      if (order == 0) {
        merged += x(i)._1 -> merge(x(i)._2, y(j)._2)
        i += 1
        j += 1
      } else if (order < 0) {
        merged += x(i)
        i += 1
      } else {
        merged += y(j)
        j += 1
      }
    }
    (merged ++= x.drop(i) ++= y.drop(j)).result()
  }

  /** A scalar token's kind (the parser on it). */
  def scalar(parser: JsonParser): Kind = parser.currentToken() match {
    case JsonToken.VALUE_STRING => if (parser.getTextLength < 1) Null else Text
    case JsonToken.VALUE_NUMBER_INT => parser.getNumberType match {
      case JsonParser.NumberType.INT | JsonParser.NumberType.LONG => Long
      case _ =>
        val value = parser.getDecimalValue
        val precision = math.max(value.precision(), value.scale())
        if (precision <= MaxPrecision) Dec(precision, value.scale()) else Double
    }
    case JsonToken.VALUE_NUMBER_FLOAT => Double
    case JsonToken.VALUE_TRUE | JsonToken.VALUE_FALSE => Bool
    case JsonToken.VALUE_NULL => Null
    case other => throw InferJson.Decline(s"an unexpected $other")
  }

  /** The kind `json` wrote. */
  def fromJson(node: com.fasterxml.jackson.databind.JsonNode): Kind =
    node.get("t").asText() match {
      case "record" =>
        val fields = Vector.newBuilder[(String, Kind)]
        node.get("f").elements().forEachRemaining(pair =>
          fields += pair.get(0).asText() -> fromJson(pair.get(1)))
        Record(fields.result())
      case "array" => Items(fromJson(node.get("e")))
      case "decimal" => Dec(node.get("p").asInt(), node.get("s").asInt())
      case "null" => Null
      case "boolean" => Bool
      case "long" => Long
      case "double" => Double
      case "text" => Text
      case _ => Mixed
    }

  def write(kind: Kind, out: DataOutputStream): Unit = kind match {
    case Dec(p, s) => out.writeByte('d'); out.writeInt(p); out.writeInt(s)
    case Record(fields) =>
      out.writeByte('r'); out.writeInt(fields.length)
      fields.foreach { case (name, k) => out.writeUTF(name); write(k, out) }
    case Items(element) => out.writeByte('a'); write(element, out)
    case Null => out.writeByte('0')
    case Bool => out.writeByte('b')
    case Long => out.writeByte('l')
    case Double => out.writeByte('f')
    case Text => out.writeByte('t')
    case Mixed => out.writeByte('m')
  }

  def read(in: DataInputStream): Kind = in.readByte() match {
    case 'd' => Dec(in.readInt(), in.readInt())
    case 'r' => Record(Vector.fill(in.readInt())(in.readUTF() -> read(in)))
    case 'a' => Items(read(in))
    case '0' => Null
    case 'b' => Bool
    case 'l' => Long
    case 'f' => Double
    case 't' => Text
    case 'm' => Mixed
  }

  /** {"t": "record", "f": [[name, kind], ...]}, {"t": "array", "e": kind}, {"t": "decimal",
    * "p": p, "s": s}, or {"t": "null"|"boolean"|"long"|"double"|"text"|"mixed"}. */
  def json(kind: Kind, out: com.fasterxml.jackson.core.JsonGenerator): Unit = {
    out.writeStartObject()
    kind match {
      case Dec(p, s) =>
        out.writeStringField("t", "decimal"); out.writeNumberField("p", p)
        out.writeNumberField("s", s)
      case Record(fields) =>
        out.writeStringField("t", "record")
        out.writeArrayFieldStart("f")
        fields.foreach { case (name, k) =>
          out.writeStartArray(); out.writeString(name); json(k, out); out.writeEndArray()
        }
        out.writeEndArray()
      case Items(element) => out.writeStringField("t", "array"); out.writeFieldName("e"); json(element, out)
      case other => out.writeStringField("t", other match {
        case Null => "null"
        case Bool => "boolean"
        case Long => "long"
        case Double => "double"
        case Text => "text"
        case _ => "mixed"
      })
    }
    out.writeEndObject()
  }
}

/** What the lines seen so far give: their merged record type, or why Spark's own inference
  * must decide (a line that is not one plain JSON object). */
final class InferBuffer(var kind: Kind, var declined: String)

/** asaql_infer_json(line, max_depth): Spark's JSON schema inference over the lines, and which
  * fields' events disagree in type, in one pass (Spark's inference job and the mixed fields'
  * job were two passes over the text). Each line is read by Jackson as Spark's JSON reader
  * builds it; a line that is not blank and not one JSON object (bad JSON, text after it, an
  * array, a byte-order mark, bytes that are not UTF-8), with a key twice (at the top level in any case) or nested deeper
  * than `max_depth` declines: → JSON {"declined": reason} and asaql asks Spark instead (its
  * careful path: io.py). Else → {"kind": the merged type}. */
case class InferJson(child: Expression, maxDepth: Int,
                     mutableAggBufferOffset: Int = 0, inputAggBufferOffset: Int = 0)
  extends TypedImperativeAggregate[InferBuffer] {

  override def children: Seq[Expression] = Seq(child)
  override def dataType: DataType = StringType
  override def nullable: Boolean = false
  override def prettyName: String = InferJson.Name

  @transient private lazy val factory: JsonFactory = InferJson.factory()

  @transient private lazy val cover = new KindCover(factory, maxDepth)

  override def createAggregationBuffer(): InferBuffer = new InferBuffer(Kind.Null, null)

  override def update(buffer: InferBuffer, input: InternalRow): InferBuffer = {
    if (buffer.declined != null) return buffer
    val text = child.eval(input).asInstanceOf[UTF8String]
    if (text == null) return buffer
    // the line's UTF-8 bytes where they are (a line of the text source points into its file's
    // buffer): Jackson's byte parser, no Java string decoded and copied first
    val (bytes, offset) = text.getBaseObject match {
      case array: Array[Byte] if text.getBaseOffset >= Platform.BYTE_ARRAY_OFFSET =>
        (array, (text.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt)
      case _ => (text.getBytes, 0)
    }
    add(buffer, bytes, offset, text.numBytes)
  }

  /** `buffer` with the line at `offset` (`size` bytes) merged in. */
  def add(buffer: InferBuffer, bytes: Array[Byte], offset: Int, size: Int): InferBuffer = {
    if (buffer.declined != null) return buffer
    var start = 0
    while (start < size && " \t\r\n".indexOf(bytes(offset + start).toInt) >= 0) start += 1
    if (start == size) return buffer
    if (bytes(offset + start) != '{') {
      buffer.declined = "a line that is not one JSON object"
      return buffer
    }
    buffer.kind match {  // the common line adds nothing to what the lines before gave
      case merged: Kind.Record if cover.covers(merged, bytes, offset, size) => return buffer
      case _ =>
    }
    try {
      // bytes that are not UTF-8 fail the parse, as they fail Spark's reader: Spark decides
      val kind = parsed(factory.createParser(bytes, offset, size))
      if (kind == null) buffer.declined = "text after a record"
      else buffer.kind = Kind.merge(buffer.kind, kind)
    } catch {
      case InferJson.Decline(reason) => buffer.declined = reason
      case _: java.io.IOException => buffer.declined = "a line that is not JSON"
    }
    buffer
  }

  /** The record's kind, or null when text follows it. */
  private def parsed(parser: JsonParser): Kind = try {
    parser.nextToken()
    val kind = recordOf(parser, 1, topLevel = true)
    if (parser.nextToken() != null) null else kind
  } finally parser.close()

  private def recordOf(parser: JsonParser, depth: Int, topLevel: Boolean): Kind = {
    if (depth > maxDepth) throw InferJson.Decline("a record nested too deep")
    val fields = Vector.newBuilder[(String, Kind)]
    // a top-level key twice in any case makes the event malformed; a key twice inside makes
    // the variants' reading (mixed_fields.py) see no value, so Spark's way decides both
    val names = new java.util.HashSet[String]()
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      val name = parser.getCurrentName
      if (!names.add(if (topLevel) name.toLowerCase(java.util.Locale.ROOT) else name))
        throw InferJson.Decline("a key twice")
      parser.nextToken()
      fields += name -> valueOf(parser, depth)
    }
    Kind.Record(fields.result().sortWith((x, y) => x._1.compareTo(y._1) < 0))
  }

  private def valueOf(parser: JsonParser, depth: Int): Kind = parser.currentToken() match {
    case JsonToken.START_OBJECT => recordOf(parser, depth + 1, topLevel = false)
    case JsonToken.START_ARRAY =>
      if (depth + 1 > maxDepth) throw InferJson.Decline("a record nested too deep")
      var element: Kind = Kind.Null
      while (parser.nextToken() != JsonToken.END_ARRAY) {
        element = Kind.merge(element, valueOf(parser, depth + 1))
      }
      Kind.Items(element)
    case _ => Kind.scalar(parser)
  }

  override def merge(buffer: InferBuffer, input: InferBuffer): InferBuffer = {
    if (buffer.declined == null) {
      if (input.declined != null) buffer.declined = input.declined
      else buffer.kind = Kind.merge(buffer.kind, input.kind)
    }
    buffer
  }

  override def eval(buffer: InferBuffer): Any = {
    val text = new java.io.StringWriter()
    val json = new JsonFactory().createGenerator(text)
    json.writeStartObject()
    if (buffer.declined != null) json.writeStringField("declined", buffer.declined)
    else { json.writeFieldName("kind"); Kind.json(buffer.kind, json) }
    json.writeEndObject()
    json.close()
    UTF8String.fromString(text.toString)
  }

  override def serialize(buffer: InferBuffer): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    val out = new DataOutputStream(bytes)
    out.writeBoolean(buffer.declined != null)
    if (buffer.declined != null) out.writeUTF(buffer.declined) else Kind.write(buffer.kind, out)
    out.flush()
    bytes.toByteArray
  }

  override def deserialize(bytes: Array[Byte]): InferBuffer = {
    val in = new DataInputStream(new ByteArrayInputStream(bytes))
    if (in.readBoolean()) new InferBuffer(Kind.Null, in.readUTF())
    else new InferBuffer(Kind.read(in), null)
  }

  override def withNewMutableAggBufferOffset(offset: Int): InferJson =
    copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): InferJson =
    copy(inputAggBufferOffset = offset)
  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): InferJson =
    copy(child = c.head)
}

object InferJson {
  val Name = "asaql_infer_json"

  /** The factory of Spark's inference (its options' defaults), bytes read as UTF-8: the one
    * the inference reads lines with, and so the one a check against its result must use. */
  def factory(): JsonFactory =
    JsonRecord.utf8Only(new JSONOptions(Map.empty[String, String], "UTC").buildJsonFactory())

  /** The aggregate's answer over a sample of local files, in the driver: the whole lines of
    * each file's first `bytesPerFile` bytes and of its last (a file's fields change over its
    * time: the last lines have the newest), or of the whole file when it is at most twice
    * that. A file that starts with a byte-order mark declines (Spark's text source keeps it
    * in the first line, which InferJson declines). */
  def sample(paths: java.util.List[String], bytesPerFile: Int, maxDepth: Int): String = {
    val infer = InferJson(org.apache.spark.sql.catalyst.expressions.Literal(""), maxDepth)
    val buffer = infer.createAggregationBuffer()
    paths.forEach { path =>
      val file = new java.io.RandomAccessFile(path, "r")
      try {
        val size = file.length()
        val whole = size <= 2L * bytesPerFile
        val head = new Array[Byte](if (whole) size.toInt else bytesPerFile)
        file.readFully(head)
        if (head.length >= 3 && (head(0) & 0xff) == 0xef && (head(1) & 0xff) == 0xbb &&
            (head(2) & 0xff) == 0xbf) buffer.declined = "a byte-order mark"
        addLines(infer, buffer, head, first = true, last = whole)
        if (!whole) {
          val tail = new Array[Byte](bytesPerFile)
          file.seek(size - bytesPerFile)
          file.readFully(tail)
          addLines(infer, buffer, tail, first = false, last = true)
        }
      } finally file.close()
    }
    infer.eval(buffer).toString
  }

  /** The whole lines of `bytes`: the first only when it starts the file, the last only when
    * it ends it. */
  private def addLines(infer: InferJson, buffer: InferBuffer, bytes: Array[Byte],
                       first: Boolean, last: Boolean): Unit = {
    var start = -1
    if (first) start = 0
    var at = 0
    while (at < bytes.length) {
      if (bytes(at) == '\n') {
        if (start >= 0) infer.add(buffer, bytes, start, at - start)
        start = at + 1
      }
      at += 1
    }
    if (last && start >= 0 && start < bytes.length) {
      infer.add(buffer, bytes, start, bytes.length - start)
    }
  }

  final case class Decline(reason: String) extends Exception(reason, null, false, false)
}
