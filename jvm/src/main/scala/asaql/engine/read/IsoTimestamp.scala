package asaql.engine

import java.time.{ZoneId, ZoneOffset}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.types.{DataType, StringType, TimestampType}
import org.apache.spark.unsafe.types.UTF8String

/** `try_to_timestamp(text)` (Spark's cast of a string to a timestamp, NULL when it is none),
  * with the form events carry read directly: `yyyy-MM-ddTHH:mm:ss[.f…][Z]` (a space for the
  * `T`; no suffix in a UTC session). Spark's cast parses the zone of every value through a
  * regular expression and java.time objects: a fifth of the native step's pass. Any other
  * text goes to Spark's own parser, so the results are Spark's. */
case class IsoTimestamp(child: Expression, timeZoneId: String) extends UnaryExpression {

  override def checkInputDataTypes(): TypeCheckResult =
    if (child.dataType == StringType) TypeCheckResult.TypeCheckSuccess
    else TypeCheckResult.TypeCheckFailure(s"${IsoTimestamp.Name} takes text")

  override def dataType: DataType = TimestampType

  override def nullable: Boolean = true

  @transient private lazy val zone: ZoneId = DateTimeUtils.getZoneId(timeZoneId)
  @transient private lazy val utcSession: Boolean =
    zone.normalized() == ZoneOffset.UTC

  def micros(text: UTF8String): Long = {
    val fast = IsoTimestamp.fast(text, utcSession)
    if (fast != IsoTimestamp.Invalid) fast
    else DateTimeUtils.stringToTimestamp(text, zone) match {
      case Some(value) => value
      case None => IsoTimestamp.Invalid
    }
  }

  override def eval(input: InternalRow): Any = {
    val text = child.eval(input).asInstanceOf[UTF8String]
    if (text == null) null
    else {
      val value = micros(text)
      if (value == IsoTimestamp.Invalid) null else value
    }
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val self = ctx.addReferenceObj("asaqlIsoTimestamp", this, classOf[IsoTimestamp].getName)
    nullSafeCodeGen(ctx, ev, text =>
      s"""${ev.value} = $self.micros($text);
         |${ev.isNull} = ${ev.value} == ${IsoTimestamp.Invalid}L;""".stripMargin)
  }

  override protected def withNewChildInternal(newChild: Expression): IsoTimestamp =
    copy(child = newChild)

  override def prettyName: String = IsoTimestamp.Name
}

object IsoTimestamp {
  val Name = "asaql_timestamp"
  /** No timestamp. Spark's cast never gives it: the instant is before year -290,000. */
  val Invalid: Long = Long.MinValue

  private val DaysInMonth = Array(31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

  /** µs since the epoch of `yyyy-MM-ddTHH:mm:ss[.f…](Z|, in a UTC session, nothing)`, else
    * Invalid (then Spark's parser decides). Fractions past µs are cut, as Spark cuts them. */
  def fast(text: UTF8String, utcSession: Boolean): Long = {
    val size = text.numBytes
    if (size < 19) return Invalid
    val base = text.getBaseObject
    val offset = text.getBaseOffset
    def at(i: Int): Int = org.apache.spark.unsafe.Platform.getByte(base, offset + i)
    def digits(from: Int, count: Int): Int = {
      var value = 0
      var i = from
      while (i < from + count) {
        val d = at(i) - '0'
        if (d < 0 || d > 9) return -1
        value = value * 10 + d
        i += 1
      }
      value
    }
    if (at(4) != '-' || at(7) != '-' || (at(10) != 'T' && at(10) != ' ') || at(13) != ':'
        || at(16) != ':') return Invalid
    val year = digits(0, 4)
    val month = digits(5, 2)
    val day = digits(8, 2)
    val hour = digits(11, 2)
    val minute = digits(14, 2)
    val second = digits(17, 2)
    if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0
        || minute > 59 || second < 0 || second > 59) return Invalid
    val leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    if (day > (if (month == 2 && leap) 29 else DaysInMonth(month - 1))) return Invalid
    var i = 19
    var fraction = 0
    if (i < size && at(i) == '.') {
      i += 1
      val first = i
      var kept = 0
      while (i < size && at(i) >= '0' && at(i) <= '9') {
        if (kept < 6) {
          fraction = fraction * 10 + (at(i) - '0')
          kept += 1
        }
        i += 1
      }
      if (i == first) return Invalid
      while (kept < 6) {
        fraction *= 10
        kept += 1
      }
    }
    if (i == size - 1 && at(i) == 'Z') i += 1
    else if (!(i == size && utcSession)) return Invalid
    if (i != size) return Invalid
    // days from 0000-03-01, then from the epoch (the proleptic Gregorian calendar, as java.time)
    val y = if (month <= 2) year - 1 else year
    val era = (if (y >= 0) y else y - 399) / 400
    val yearOfEra = y - era * 400
    val dayOfYear = (153 * (if (month > 2) month - 3 else month + 9) + 2) / 5 + day - 1
    val dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    val days = era.toLong * 146097 + dayOfEra - 719468
    ((days * 86400 + hour * 3600 + minute * 60 + second) * 1000000L) + fraction
  }
}
