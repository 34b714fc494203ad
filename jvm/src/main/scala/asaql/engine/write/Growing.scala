package asaql.engine

import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** A byte array that grows. */
final class Growing {
  var bytes = new Array[Byte](256)
  var size = 0

  def add(b: Int): Unit = {
    if (size == bytes.length) bytes = java.util.Arrays.copyOf(bytes, size * 2)
    bytes(size) = b.toByte
    size += 1
  }

  /** `value` unsigned, big-endian, as OrderedLines.NumberDigits bytes that compare as it
    * does: its top 4 bits, then 6 bits a byte, each byte 0x30 + the bits. */
  def digits(value: Long): Unit = {
    reserve(OrderedLines.NumberDigits)
    bytes(size) = (0x30 + (value >>> 60)).toByte
    var shift = 54
    var at = size + 1
    while (shift >= 0) {
      bytes(at) = (0x30 + ((value >>> shift) & 0x3F)).toByte
      shift -= 6
      at += 1
    }
    size = at
  }

  def escaped(text: UTF8String): Unit = {
    val raw = text.getBytes
    var i = 0
    while (i < raw.length) {
      val b = raw(i) & 0xFF
      if (b < 0x0C) { add(3); add(b + 0x40) } else add(b)
      i += 1
    }
    add(0)
  }

  def raw(text: UTF8String): Unit = {
    reserve(text.numBytes)
    text.writeToMemory(bytes, Platform.BYTE_ARRAY_OFFSET + size)
    size += text.numBytes
  }

  /** ASCII text (a number's digits) as its bytes. */
  def ascii(text: String): Unit = {
    reserve(text.length)
    var i = 0
    while (i < text.length) {
      bytes(size + i) = text.charAt(i).toByte
      i += 1
    }
    size += text.length
  }

  def append(from: Array[Byte]): Unit = append(from, 0, from.length)

  def append(from: Array[Byte], start: Int, count: Int): Unit = {
    reserve(count)
    System.arraycopy(from, start, bytes, size, count)
    size += count
  }

  /** Room for `count` more bytes. */
  private def reserve(count: Int): Unit =
    while (size + count > bytes.length) bytes = java.util.Arrays.copyOf(bytes, bytes.length * 2)
}
