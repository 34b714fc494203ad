package asaql.engine

import java.util.regex.Pattern

import org.apache.spark.sql.catalyst.util.ArrayData
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
}
