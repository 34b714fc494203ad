package asaql.engine

import java.util.Locale

import com.fasterxml.jackson.core.{JsonLocation, JsonParser, JsonToken, JsonTokenId}
import com.fasterxml.jackson.core.io.ContentReference
import com.fasterxml.jackson.core.util.JsonParserDelegate

/** Sees every token Spark's JSON parser reads from one record, so that the record checks ride
  * on the one parse: the deepest nesting, and the top-level keys (a key twice, ignoring case,
  * makes the record malformed in ASA; Spark's parser keeps the last). Spark skips the values of
  * fields outside its schema with `skipChildren`, which would bypass `nextToken` here: it is
  * walked token by token instead, so nothing goes unseen.
  *
  * `hideSource`: locations name no source content. Over a byte-array parser Spark would
  * otherwise copy a non-string value of a string field from the raw bytes, where `from_json`
  * (a parser over a Reader) writes it out again with Jackson's generator: hidden, both write
  * the same text. */
final class RecordWatcher(parser: JsonParser, hideSource: Boolean)
    extends JsonParserDelegate(parser) {
  private var depth = 0
  var deepest = 0
  private var keys: Array[String] = new Array[String](16)
  private var keyCount = 0

  override def nextToken(): JsonToken = {
    val token = delegate.nextToken()
    if (token != null) token.id() match {
      case JsonTokenId.ID_START_OBJECT | JsonTokenId.ID_START_ARRAY =>
        depth += 1
        if (depth > deepest) deepest = depth
      case JsonTokenId.ID_END_OBJECT | JsonTokenId.ID_END_ARRAY => depth -= 1
      case JsonTokenId.ID_FIELD_NAME if depth == 1 => addKey(delegate.currentName())
      case _ =>
    }
    token
  }

  override def currentTokenLocation(): JsonLocation = hidden(delegate.currentTokenLocation())

  override def currentLocation(): JsonLocation = hidden(delegate.currentLocation())

  private def hidden(location: JsonLocation): JsonLocation =
    if (!hideSource || location == null) location
    else new JsonLocation(ContentReference.unknown(), location.getByteOffset,
      location.getCharOffset, location.getLineNr, location.getColumnNr)

  override def skipChildren(): JsonParser = {
    val token = delegate.currentToken()
    if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
      val until = depth - 1
      while (depth > until && nextToken() != null) {}
    }
    this
  }

  private def addKey(key: String): Unit = {
    if (keyCount == keys.length) keys = java.util.Arrays.copyOf(keys, keyCount * 2)
    keys(keyCount) = key
    keyCount += 1
  }

  /** No top-level key twice, ignoring case; only ASCII keys are vouched for (lower case beyond
    * ASCII depends on the locale: such a record is left to the exact checks). */
  def keysDistinct: Boolean = {
    if (keyCount < 2) return keyCount == 0 || isAscii(keys(0))
    var i = 0
    while (i < keyCount) {
      if (!isAscii(keys(i))) return false
      i += 1
    }
    if (keyCount <= 24) {
      i = 0
      while (i < keyCount) {
        var j = i + 1
        while (j < keyCount) {
          if (keys(i).equalsIgnoreCase(keys(j))) return false
          j += 1
        }
        i += 1
      }
      true
    } else {
      val seen = new java.util.HashSet[String](keyCount * 2)
      i = 0
      while (i < keyCount) {
        if (!seen.add(keys(i).toLowerCase(Locale.ROOT))) return false
        i += 1
      }
      true
    }
  }

  private def isAscii(key: String): Boolean = {
    var i = 0
    while (i < key.length) {
      if (key.charAt(i) >= 0x80) return false
      i += 1
    }
    true
  }
}
