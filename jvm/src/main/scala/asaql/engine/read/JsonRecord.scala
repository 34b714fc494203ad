package asaql.engine

import com.fasterxml.jackson.core.{JsonFactory, JsonParser}
import com.fasterxml.jackson.core.util.JsonRecyclerPools

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow}
import org.apache.spark.sql.catalyst.json.{CreateJacksonParser, JacksonParser, JSONOptions}
import org.apache.spark.sql.catalyst.util.{BadRecordException, FailureSafeParser, PermissiveMode}
import org.apache.spark.sql.types.{ArrayType, BooleanType, DataType, MapType, StructField, StructType}
import org.apache.spark.unsafe.types.UTF8String

/** A JSON-lines record parsed once, with the record checks on the same pass:
  * `struct<record: schema, clean: boolean>`.
  *
  * `record` is exactly what `from_json(text, schema, options)` gives in PERMISSIVE mode (the
  * same Spark parser, options and corrupt-record column). `clean` vouches that none of asaql's
  * record checks (asaql/spark/sources/records.py) can find a reason: the text starts with '{' and ends
  * with '}', holds no U+FFFD, parsed without error, nests at most `maxDepth` levels and has no
  * top-level key twice. A record that is not clean is not necessarily malformed: the exact
  * checks then decide, so a doubt never changes a result, it only costs their time.
  *
  * With `sample` (the record type InferJson found in a sample of the input, as JSON), a third
  * field, `fits`: whether the record adds nothing to that type (merging its own would give it
  * again), so that Spark's inference over every record would have given the sample's schema.
  * A record read by the flat loop fits (its every key is a field, its every value of the
  * field's type); any other is read once more for it (KindCover). */
case class JsonRecord(
    child: Expression,
    schema: StructType,
    options: Map[String, String],
    timeZoneId: String,
    maxDepth: Int,
    sample: String = "") extends OwnMethodCode {

  private val corruptName = options.getOrElse("columnNameOfCorruptRecord", "_corrupt_record")

  override def dataType: DataType = StructType(Seq(
    StructField("record", JsonRecord.nullable(schema), nullable = true),
    StructField("clean", BooleanType, nullable = false)) ++
    (if (sample.isEmpty) Nil else Seq(StructField("fits", BooleanType, nullable = false))))

  override def nullable: Boolean = true

  @transient private lazy val corruptIndex = schema.fieldIndex(corruptName)

  // ASCII text (the common record) is parsed from its bytes; any other by `from_json`'s own
  // parser over a UTF-8 Reader, which replaces bytes that are not UTF-8 where a byte parser
  // would refuse them: the same values either way
  @transient private lazy val byteParser = {
    var utf8: (JsonFactory, JsonFactory) = null  // JacksonParser's factory, and it for bytes
    parserOf((factory, text) => {
      if (utf8 == null || !(utf8._1 eq factory)) utf8 = (factory, JsonRecord.utf8Only(factory))
      JsonRecord.bytesParser(utf8._2, text)
    }, hideSource = true)
  }
  @transient private lazy val readerParser = parserOf(CreateJacksonParser.utf8String,
    hideSource = false)
  // the common ASCII record of a flat schema, read without Spark's converters (null: never)
  @transient private lazy val flat = FlatRecord.of(JsonRecord.nullable(schema), corruptName,
    JsonRecord.utf8Only(new JSONOptions(options, timeZoneId, corruptName).buildJsonFactory()),
    maxDepth)

  private def parserOf(
      create: (JsonFactory, UTF8String) => JsonParser,
      hideSource: Boolean): RecordParser = {
    val parsedOptions = new JSONOptions(options, timeZoneId, corruptName)
    val parsed = StructType(schema.filterNot(_.name == corruptName))
    val raw = new JacksonParser(JsonRecord.nullable(parsed), parsedOptions,
      allowArrayAsStructs = false)
    val watched = (factory: JsonFactory, text: UTF8String) => {
      watcher = new RecordWatcher(create(factory, text), hideSource)
      watcher: JsonParser
    }
    new RecordParser(raw, watched, JsonRecord.nullable(schema), corruptName)
  }

  @transient private var watcher: RecordWatcher = _

  @transient private lazy val sampled: Kind.Record =
    if (sample.isEmpty) null
    else Kind.fromJson(new com.fasterxml.jackson.databind.ObjectMapper().readTree(sample)) match {
      case record: Kind.Record => record
      case _ => Kind.Record(Vector.empty)
    }
  @transient private lazy val cover = new KindCover(InferJson.factory(), maxDepth)

  /** Whether the record adds nothing to the sample's type: a blank text does not, nor JSON
    * that breaks off inside its object (Spark's inference takes nothing from it). */
  private def fits(text: UTF8String): Boolean = {
    val bytes = text.getBytes
    bytes.forall(b => b == ' ' || b == '\t' || b == '\r' || b == '\n') ||
      cover.covers(sampled, bytes, 0, bytes.length) ||
      cover.brokenObject(bytes, 0, bytes.length)
  }

  override protected def ownMethod: String = "parse"
  override protected def evaluated(value: Any): Any = parse(value.asInstanceOf[UTF8String])

  def parse(text: UTF8String): InternalRow = {
    watcher = null
    val ascii = JsonRecord.isAscii(text)
    if (ascii && flat != null) {
      val row = flat.parse(text)
      if (row != null) {
        return if (sampled == null) InternalRow(row, true) else InternalRow(row, true, true)
      }
    }
    val record = (if (ascii) byteParser else readerParser).parse(text)
    val clean = record != null && record.isNullAt(corruptIndex) && watcher != null &&
      watcher.deepest <= maxDepth && watcher.keysDistinct &&
      JsonRecord.plainObjectText(text, ascii)
    if (sampled == null) InternalRow(record, clean) else InternalRow(record, clean, fits(text))
  }

  override protected def withNewChildInternal(newChild: Expression): JsonRecord =
    copy(child = newChild)

  override def prettyName: String = JsonRecord.Name
}

object JsonRecord {
  val Name = "asaql_json_record"
  private val Replacement = UTF8String.fromString("\uFFFD")

  /** The schema with every level nullable, as `from_json` reads it (Spark's own helper is
    * private to it). */
  def nullable(schema: StructType): StructType =
    StructType(schema.fields.map(f => f.copy(dataType = nullableType(f.dataType), nullable = true)))

  private def nullableType(kind: DataType): DataType = kind match {
    case s: StructType => nullable(s)
    case a: ArrayType => ArrayType(nullableType(a.elementType), containsNull = true)
    case m: MapType => MapType(nullableType(m.keyType), nullableType(m.valueType),
      valueContainsNull = true)
    case other => other
  }

  /** Whether every byte is ASCII, read eight at a time (UTF8String's own test reads one). */
  def isAscii(text: UTF8String): Boolean =
    ByteWords.firstHigh(text.getBaseObject, text.getBaseOffset, 0, text.numBytes) ==
      text.numBytes

  /** '{' first, '}' last, no U+FFFD (what a decoder makes of bytes that are not UTF-8). */
  def plainObjectText(text: UTF8String, ascii: Boolean): Boolean = {
    val size = text.numBytes()
    size >= 2 && text.getByte(0) == '{' && text.getByte(size - 1) == '}' &&
      (ascii || !text.contains(Replacement))
  }

  /** A parser over the text's bytes, without a copy when they are on the heap. */
  def bytesParser(factory: JsonFactory, text: UTF8String): JsonParser = {
    val bytes = text.getByteBuffer
    factory.createParser(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining())
  }

  /** `factory`'s settings without its guess of each parser's charset from the first bytes (a
    * byte-order mark, UTF-16 or -32): a few percent of a record's parse. Spark's reader
    * decodes a line as UTF-8 whatever it starts with, and asaql's byte parsers read UTF-8.
    * Its parsers' buffers come from a pool of its own: Jackson's default pool, one per thread,
    * looked up in the thread's many ThreadLocals for every record, was 4% of a pass. */
  def utf8Only(factory: JsonFactory): JsonFactory =
    factory.rebuild().disable(JsonFactory.Feature.CHARSET_DETECTION)
      .recyclerPool(JsonRecyclerPools.newLockFreePool()).build()
}

/** `from_json`'s PERMISSIVE parse of one record (FailureSafeParser over `raw`), with its common
  * case direct: a record Spark's parser reads without error is its one row widened by a NULL
  * corrupt-record column, which FailureSafeParser builds by looking each field's index up by
  * name at every row (3–4% of the one pass's samples). A record it refuses is parsed again by
  * FailureSafeParser itself, so its partial values and corrupt text are Spark's. */
final class RecordParser(
    raw: JacksonParser,
    watched: (JsonFactory, UTF8String) => JsonParser,
    schema: StructType,
    corruptName: String) {
  private val fallback = new FailureSafeParser[UTF8String](
    text => raw.parse(text, watched, identity[UTF8String]), PermissiveMode, schema, corruptName)
  private val parsed = schema.filterNot(_.name == corruptName)
  private val parsedTypes = parsed.map(_.dataType).toArray
  // where FailureSafeParser puts each parsed field (by name, as it looks it up)
  private val positions = parsed.map(f => schema.fieldIndex(f.name)).toArray

  /** The record's row, or null when the text holds no JSON value (as `from_json`). */
  def parse(text: UTF8String): InternalRow = {
    val rows = try raw.parse(text, watched, identity[UTF8String]) catch {
      case _: BadRecordException =>
        val safe = fallback.parse(text)
        return if (safe.hasNext) safe.next().copy() else null
    }
    val first = rows.iterator
    if (!first.hasNext) return null
    val row = first.next()
    val values = new Array[Any](schema.length)  // the corrupt-record column stays NULL
    var i = 0
    while (i < positions.length) {
      values(positions(i)) = row.get(i, parsedTypes(i))
      i += 1
    }
    new GenericInternalRow(values)
  }
}
