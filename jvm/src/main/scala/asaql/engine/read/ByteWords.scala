package asaql.engine

import org.apache.spark.unsafe.Platform

/** Bytes tested eight at a time, read as one long (SWAR): what the record scans share. A word
  * is read at any byte only where the platform allows it (`Unaligned`); elsewhere the scans
  * go byte by byte. */
private[engine] object ByteWords {
  val Unaligned: Boolean = Platform.unaligned()
  private val Ones = 0x0101010101010101L
  private val Highs = 0x8080808080808080L

  /** The eight bytes at `offset` of `base`. */
  def at(base: AnyRef, offset: Long): Long = Platform.getLong(base, offset)

  /** Whether any of a word's bytes has its high bit set (is not ASCII). */
  def anyHigh(word: Long): Boolean = (word & Highs) != 0

  /** The index of the first byte at or after `from` (below `size`) of `base` at `offset`
    * whose high bit is set (not ASCII), or `size`: the ASCII before it read a word at a time. */
  def firstHigh(base: AnyRef, offset: Long, from: Int, size: Int): Int = {
    var i = from
    if (Unaligned) while (i + 8 <= size && !anyHigh(at(base, offset + i))) i += 8
    while (i < size && Platform.getByte(base, offset + i) >= 0) i += 1
    i
  }

  /** `byte` in each of a word's eight bytes, for `contains`. */
  def spread(byte: Byte): Long = (byte & 0xffL) * Ones

  /** Whether a word holds the byte that `spread` was made of: a byte of their XOR is zero. */
  def contains(word: Long, spread: Long): Boolean = {
    val differ = word ^ spread
    ((differ - Ones) & ~differ & Highs) != 0
  }
}
