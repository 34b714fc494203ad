package asaql.engine

import java.util.regex.Pattern

import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** The record checks that Spark expressions could only write with lambdas (asaql/spark/
  * records.py: `_depth`, `_top_level_values`, the naming of a repeated key), as plain methods
  * Spark's generated code calls (StaticInvoke): a lambda is evaluated outside whole-stage code
  * generation and takes its whole projection with it. Each gives what the expressions give. */
object RecordText {
  // a JSON string literal, the pattern records.py removes before counting brackets
  private val StringLiteral = Pattern.compile("\"[^\"\\\\]*+(?:\\\\.[^\"\\\\]*+)*+\"")

  /** The brackets outside strings, in order. */
  private def brackets(text: UTF8String): String = {
    val outside = StringLiteral.matcher(text.toString).replaceAll("")
    val kept = new java.lang.StringBuilder()
    var i = 0
    while (i < outside.length) {
      val c = outside.charAt(i)
      if (c == '[' || c == ']' || c == '{' || c == '}') kept.append(c)
      i += 1
    }
    kept.toString
  }

  /** The deepest nesting of objects and arrays outside strings. */
  def depth(text: UTF8String): Int = walk(text)._1

  /** How many times the brackets outside strings close back to the top level. */
  def topLevelValues(text: UTF8String): Int = walk(text)._2

  /** One walk over the brackets outside strings: (the deepest level, the returns to the top). */
  private def walk(text: UTF8String): (Int, Int) = {
    val found = brackets(text)
    var at, deepest, closed, i = 0
    while (i < found.length) {
      val c = found.charAt(i)
      at += (if (c == '{' || c == '[') 1 else -1)
      if (at > deepest) deepest = at
      if (at == 0) closed += 1
      i += 1
    }
    (deepest, closed)
  }

  /** The first key whose lower-case form (`lowered`, by Spark's `lower`, in the same order)
    * appears more than once; null if none. */
  def repeatedKey(keys: ArrayData, lowered: ArrayData): UTF8String = {
    val count = math.min(keys.numElements(), lowered.numElements())
    var i = 0
    while (i < count) {
      val mine = if (lowered.isNullAt(i)) null else lowered.getUTF8String(i)
      var same, j = 0
      while (j < lowered.numElements()) {
        if (!lowered.isNullAt(j) && lowered.getUTF8String(j) == mine) same += 1
        j += 1
      }
      if (same > 1) return if (keys.isNullAt(i)) null else keys.getUTF8String(i)
      i += 1
    }
    null
  }

  private val PartitionKey = "\"PartitionId\"".getBytes("UTF-8")
  private val ArrivalKey = "\"EventEnqueuedUtcTime\"".getBytes("UTF-8")

  /** What `regexp_extract(text, '"PartitionId"\\s*:\\s*"?(\\d{1,18})"?\\s*[,}]', 1)` gives
    * (asaql/spark/sources/io.py's discovery of the input's partitions), null for its "": the digits
    * after the first "PartitionId" key that such a value follows, found by comparing bytes
    * (every byte the pattern names is ASCII, which no multi-byte UTF-8 character contains). */
  def partitionDigits(text: UTF8String): UTF8String = firstValue(text, PartitionKey) {
    (bytes, from, end) =>
      var j = from
      if (j < end && bytes(j) == '"') j += 1
      val start = j
      while (j < end && bytes(j) >= '0' && bytes(j) <= '9') j += 1
      val digits = j - start
      if (digits < 1 || digits > 18) null
      else {
        var k = j
        if (k < end && bytes(k) == '"') k += 1
        k = skipSpace(bytes, k, end)
        if (k < end && (bytes(k) == ',' || bytes(k) == '}')) {
          UTF8String.fromBytes(bytes, start, digits)
        } else null
      }
  }

  /** What `regexp_extract(text, '"EventEnqueuedUtcTime"\\s*:\\s*"([^"]+)"', 1)` gives, null
    * for its "": the text of the first such key's non-empty string value. */
  def arrivalText(text: UTF8String): UTF8String = firstValue(text, ArrivalKey) {
    (bytes, from, end) =>
      if (from >= end || bytes(from) != '"') null
      else {
        var k = from + 1
        while (k < end && bytes(k) != '"') k += 1
        if (k < end && k > from + 1) UTF8String.fromBytes(bytes, from + 1, k - from - 1)
        else null
      }
  }

  /** For each `key` in the text followed by a colon (spaces around it), in order, `value` of
    * the text after them (the bytes, where to start, where the text ends): the first that is
    * not null, else null. A text that is a slice of a byte array (a line of a file read
    * whole) is read in place: copying each record was most of the cost. */
  private def firstValue(text: UTF8String, key: Array[Byte])(
      value: (Array[Byte], Int, Int) => UTF8String): UTF8String = {
    val inPlace = text.getBaseObject.isInstanceOf[Array[Byte]]
    val bytes = if (inPlace) text.getBaseObject.asInstanceOf[Array[Byte]] else text.getBytes
    val begin = if (inPlace) (text.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt else 0
    val end = begin + text.numBytes
    var at = find(bytes, key, begin, end)
    while (at >= 0) {
      val j = skipSpace(bytes, at + key.length, end)
      if (j < end && bytes(j) == ':') {
        val found = value(bytes, skipSpace(bytes, j + 1, end), end)
        if (found != null) return found
      }
      at = find(bytes, key, at + 1, end)
    }
    null
  }

  // \s in a Java pattern: space, tab, newline, vertical tab, form feed, carriage return
  private def skipSpace(bytes: Array[Byte], from: Int, end: Int): Int = {
    var i = from
    while (i < end && (bytes(i) == ' ' || (bytes(i) >= 9 && bytes(i) <= 13))) i += 1
    i
  }

  /** Where `key` first starts in bytes[from, end), or -1. The scan looks for the key's second
    * byte (a letter; the first, a quote, is in every field) eight bytes at a time: a word
    * without it (most) is passed in one step, one with it is tried byte by byte. */
  private def find(bytes: Array[Byte], key: Array[Byte], from: Int, end: Int): Int = {
    val anchor = key(1)
    val spread = ByteWords.spread(anchor)
    var i = from + 1
    val last = end - key.length + 1 // the last place the anchor can be
    while (i <= last) {
      val byWord = ByteWords.Unaligned && i + 8 <= end
      if (byWord && !ByteWords.contains(
          ByteWords.at(bytes, Platform.BYTE_ARRAY_OFFSET + i), spread)) i += 8
      else {
        val stop = if (byWord) math.min(i + 8, last + 1) else i + 1
        while (i < stop) {
          if (bytes(i) == anchor && matches(bytes, key, i - 1)) return i - 1
          i += 1
        }
      }
    }
    -1
  }

  private def matches(bytes: Array[Byte], key: Array[Byte], at: Int): Boolean = {
    var m = 0
    while (m < key.length && bytes(at + m) == key(m)) m += 1
    m == key.length
  }
}
