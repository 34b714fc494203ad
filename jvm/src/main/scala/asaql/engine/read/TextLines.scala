package asaql.engine

import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData}
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** A file's text cut into its lines: what `split(text, '\n')` gives, without Spark's detour
  * through Java strings (its split decodes the whole text, splits it and encodes each line
  * again: 3.8% of a by-window pass, JFR, docs/speed.md). Each line is copied once from the
  * text's bytes. A text that is not valid UTF-8 takes Spark's own split, whose decoding
  * replaces its bad bytes, so every text gives what Spark gives. */
object TextLines {
  val Name = "asaql_lines"
  private val NewLine = UTF8String.fromString("\n")

  def lines(text: UTF8String): ArrayData = {
    if (!valid(text))
      return new GenericArrayData(text.split(NewLine, -1).asInstanceOf[Array[AnyRef]])
    val base = text.getBaseObject
    val offset = text.getBaseOffset
    val size = text.numBytes
    val found = new java.util.ArrayList[AnyRef]()
    var start = 0
    var i = 0
    // byte by byte: an eight-byte scan for the line breaks, as `valid` does for ASCII, took
    // five times this loop's samples (JFR), whose simple counted form HotSpot compiles well
    while (i < size) {
      if (Platform.getByte(base, offset + i) == '\n') {
        found.add(copied(base, offset + start, i - start))
        start = i + 1
      }
      i += 1
    }
    found.add(copied(base, offset + start, size - start))
    new GenericArrayData(found.toArray)
  }

  /** Whether the text is valid UTF-8, as `UTF8String.isValid` decides, which reads every byte
    * on its own (7.9% of a pass-through pass over 8 MB files, JFR): ASCII words are skipped
    * eight bytes at a time, and each run of bytes that are not ASCII is given to `isValid`.
    * A byte below 0x80 is never part of a longer sequence, so the text is valid exactly when
    * each such run is (a sequence cut by an ASCII byte is cut at its run's end too). */
  def valid(text: UTF8String): Boolean = {
    val base = text.getBaseObject
    val offset = text.getBaseOffset
    val size = text.numBytes
    var i = ByteWords.firstHigh(base, offset, 0, size)
    while (i < size) {
      var end = i + 1
      while (end < size && Platform.getByte(base, offset + end) < 0) end += 1
      if (!UTF8String.fromAddress(base, offset + i, end - i).isValid) return false
      i = ByteWords.firstHigh(base, offset, end, size)
    }
    true
  }

  private def copied(base: AnyRef, at: Long, size: Int): UTF8String = {
    val bytes = new Array[Byte](size)
    Platform.copyMemory(base, at, bytes, Platform.BYTE_ARRAY_OFFSET, size)
    UTF8String.fromBytes(bytes)
  }
}
