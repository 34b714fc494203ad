package asaql.engine

import java.time.{ZoneId, ZoneOffset}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{BoundReference, DateFormatClass, Expression,
  Literal}
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.types.{DataType, StringType, TimestampType}
import org.apache.spark.unsafe.types.UTF8String

/** A datetime as ASA writes it, `yyyy-MM-ddTHH:mm:ss.fffffffZ` (seven digits; Spark keeps µs,
  * so the seventh is 0): what `concat(date_format(ts, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"), "0Z")`
  * gives. In a UTC session, for the years 0001–9999, written with integer arithmetic: Spark's
  * formatter goes through java.time objects and a BigDecimal for the fraction, 5% of a
  * pass-through's pass. Any other instant or zone: Spark's own `date_format`, so the text is
  * always Spark's. */
case class DatetimeText(child: Expression, timeZoneId: String) extends OwnMethodCode {

  override def checkInputDataTypes(): TypeCheckResult =
    if (child.dataType == TimestampType) TypeCheckResult.TypeCheckSuccess
    else TypeCheckResult.TypeCheckFailure(s"${DatetimeText.Name} takes a timestamp")

  override def dataType: DataType = StringType

  @transient private lazy val zone: ZoneId = DateTimeUtils.getZoneId(timeZoneId)
  @transient private lazy val utcSession: Boolean = zone.normalized() == ZoneOffset.UTC
  @transient private lazy val sparks = DateFormatClass(
    BoundReference(0, TimestampType, nullable = false), Literal(DatetimeText.Pattern),
    Some(timeZoneId))

  def text(micros: Long): UTF8String = {
    val fast = if (utcSession) DatetimeText.utc(micros) else null
    if (fast != null) fast
    else UTF8String.concat(sparks.eval(InternalRow(micros)).asInstanceOf[UTF8String],
      DatetimeText.Suffix)
  }

  override protected def ownMethod: String = "text"
  override protected def evaluated(value: Any): Any = text(value.asInstanceOf[Long])

  override protected def withNewChildInternal(newChild: Expression): DatetimeText =
    copy(child = newChild)

  override def prettyName: String = DatetimeText.Name
}

object DatetimeText {
  val Name = "asaql_datetime_text"
  val Pattern = "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"
  private val Suffix = UTF8String.fromString("0Z")
  private val MicrosPerDay = 86400000000L
  private val First = -62135596800000000L // 0001-01-01T00:00:00Z
  private val End = 253402300800000000L // 10000-01-01T00:00:00Z

  /** The UTC text of µs since the epoch in the years 0001–9999, else null. */
  def utc(micros: Long): UTF8String = {
    if (micros < First || micros >= End) return null
    val days = Math.floorDiv(micros, MicrosPerDay)
    val inDay = Math.floorMod(micros, MicrosPerDay)
    // the civil date of a day count (the proleptic Gregorian calendar, eras of 400 years
    // from 0000-03-01), as java.time computes it
    val z = days + 719468
    val era = Math.floorDiv(z, 146097L)
    val dayOfEra = z - era * 146097
    val yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
    val dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    val shifted = (5 * dayOfYear + 2) / 153
    val day = dayOfYear - (153 * shifted + 2) / 5 + 1
    val month = if (shifted < 10) shifted + 3 else shifted - 9
    val year = yearOfEra + era * 400 + (if (month <= 2) 1 else 0)
    val seconds = inDay / 1000000
    val out = new Array[Byte](28)
    put(out, 0, year, 4)
    out(4) = '-'
    put(out, 5, month, 2)
    out(7) = '-'
    put(out, 8, day, 2)
    out(10) = 'T'
    put(out, 11, seconds / 3600, 2)
    out(13) = ':'
    put(out, 14, seconds / 60 % 60, 2)
    out(16) = ':'
    put(out, 17, seconds % 60, 2)
    out(19) = '.'
    put(out, 20, inDay % 1000000, 6)
    out(26) = '0'
    out(27) = 'Z'
    UTF8String.fromBytes(out)
  }

  private def put(out: Array[Byte], at: Int, value: Long, width: Int): Unit = {
    var rest = value
    var i = at + width - 1
    while (i >= at) {
      out(i) = ('0' + rest % 10).toByte
      rest /= 10
      i -= 1
    }
  }
}
