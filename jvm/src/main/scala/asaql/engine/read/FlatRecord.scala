package asaql.engine

import com.fasterxml.jackson.core.{JsonFactory, JsonToken}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.types.UTF8String

/** The common record read in one loop over Jackson's tokens: an object whose every key is a
  * field of a flat schema (text, numbers, booleans) at most once, each value a JSON string, a
  * number or a boolean as its field takes it, or null, and nothing after the object. That is
  * the record Spark's JSON parser reads without a doubt, through a converter per value, and
  * the record asaql's checks vouch for (JsonRecord's `clean`); anything else gives null, and
  * the caller takes Spark's parser with the checks: a doubt costs a second parse, never a
  * different row. The values are those Spark's JacksonParser gives such a record. */
final class FlatRecord private (
    factory: JsonFactory,
    names: Array[String],
    index: java.util.HashMap[String, Integer],
    kinds: Array[Int],
    positions: Array[Int],
    width: Int) {

  /** The record's row (the corrupt-record column NULL), or null when it is not such a record. */
  def parse(text: UTF8String): InternalRow = {
    val size = text.numBytes()
    // '{' first and '}' last, as the checks want it (no space around the object)
    if (size < 2 || text.getByte(0) != '{' || text.getByte(size - 1) != '}') return null
    val parser = JsonRecord.bytesParser(factory, text)
    try {
      if (parser.nextToken() != JsonToken.START_OBJECT) return null
      val values = new Array[Any](width)
      var seen = 0L
      var token = parser.nextToken()
      while (token == JsonToken.FIELD_NAME) {
        val field = fieldOf(parser.currentName())
        if (field < 0) return null  // a key outside the schema: Spark skips its value
        if ((seen & (1L << field)) != 0) return null  // a key twice
        seen |= 1L << field
        token = parser.nextToken()
        if (token != JsonToken.VALUE_NULL) {
          val value = FlatRecord.value(kinds(field), token, parser)
          if (value == null) return null
          values(positions(field)) = value
        }
        token = parser.nextToken()
      }
      if (token != JsonToken.END_OBJECT || parser.nextToken() != null) return null
      new GenericInternalRow(values)
    } catch {
      case _: Exception => null  // Jackson's refusal, a number out of range: Spark's to say
    } finally {
      parser.close()
    }
  }

  /** The field a key names, or -1. Jackson interns the keys it reads (its InternCache), as the
    * names here are, so a key is first looked for by reference: the hash map's lookup was 1.7%
    * of a pass-through pass (JFR). A parser that does not intern finds it by the map. */
  private def fieldOf(key: String): Int = {
    var i = 0
    while (i < names.length) {
      if (names(i) eq key) return i
      i += 1
    }
    val found = index.get(key)
    if (found == null) -1 else found.intValue
  }
}

object FlatRecord {
  private val Read = Set(ScalarKind.Text, ScalarKind.Double, ScalarKind.Float, ScalarKind.Long,
    ScalarKind.Int, ScalarKind.Bool)

  /** The reader for `schema` (every field nullable, the corrupt-record column among them),
    * or null when the schema is not flat: a field of another type, more than 64 fields, two
    * names equal but for case (ASA's keys are distinct ignoring case), a field with metadata
    * (a column's default), or checks that allow no nesting at all. */
  def of(schema: StructType, corruptName: String, factory: JsonFactory,
         maxDepth: Int): FlatRecord = {
    val fields = schema.fields.filterNot(_.name == corruptName)
    if (maxDepth < 1 || fields.length > 64) return null
    if (fields.map(_.name.toLowerCase(java.util.Locale.ROOT)).distinct.length != fields.length)
      return null
    if (fields.exists(f => f.metadata.json != "{}")) return null
    val kinds = fields.map(f => ScalarKind.of(f.dataType))
    if (!kinds.forall(Read.contains)) return null
    val index = new java.util.HashMap[String, Integer]()
    fields.indices.foreach(i => index.put(fields(i).name, Integer.valueOf(i)))
    new FlatRecord(factory, fields.map(_.name.intern()), index, kinds,
      fields.map(f => schema.fieldIndex(f.name)), schema.length)
  }

  /** A value as JacksonParser's converter gives it, or null where that converter would do
    * anything but read the token (a string for a number, a number for text, a nesting). */
  private def value(kind: Int, token: JsonToken, parser: com.fasterxml.jackson.core.JsonParser)
      : Any = {
    val number = token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT
    kind match {
      case ScalarKind.Text =>
        if (token == JsonToken.VALUE_STRING) text(parser) else null
      case ScalarKind.Double => if (number) parser.getDoubleValue else null
      case ScalarKind.Float => if (number) parser.getFloatValue else null
      case ScalarKind.Long => if (token == JsonToken.VALUE_NUMBER_INT) parser.getLongValue else null
      case ScalarKind.Int => if (token == JsonToken.VALUE_NUMBER_INT) parser.getIntValue else null
      case _ => if (token == JsonToken.VALUE_TRUE) true
                else if (token == JsonToken.VALUE_FALSE) false else null
    }
  }

  /** The string token's text as UTF-8, what `UTF8String.fromString(parser.getText)` gives:
    * an ASCII text (most) straight from the parser's characters, with no String between. */
  private def text(parser: com.fasterxml.jackson.core.JsonParser): UTF8String = {
    val chars = parser.getTextCharacters
    val offset = parser.getTextOffset
    val length = parser.getTextLength
    val bytes = new Array[Byte](length)
    var i = 0
    while (i < length) {
      val c = chars(offset + i)
      if (c >= 0x80) return UTF8String.fromString(new String(chars, offset, length))
      bytes(i) = c.toByte
      i += 1
    }
    UTF8String.fromBytes(bytes)
  }
}
