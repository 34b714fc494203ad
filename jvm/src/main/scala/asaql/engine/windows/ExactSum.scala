package asaql.engine

import java.nio.ByteBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.trees.UnaryLike
import org.apache.spark.sql.types.{BinaryType, DataType, DoubleType}

/** Non-overlapping partials whose exact sum is the sum of the values added (Shewchuk's
  * algorithm, as Python's `math.fsum` keeps them). */
final class Partials(private var values: Array[Double], private var count: Int) {
  def this() = this(new Array[Double](4), 0)

  def isZero: Boolean = count == 0

  def add(value: Double): Unit = {
    var x = value
    var i, j = 0
    while (j < count) {
      var y = values(j)
      if (math.abs(x) < math.abs(y)) { val t = x; x = y; y = t }
      val hi = x + y
      val lo = y - (hi - x)
      if (lo != 0.0) { values(i) = lo; i += 1 }
      x = hi
      j += 1
    }
    count = i
    if (x != 0.0) {
      if (count == values.length) values = java.util.Arrays.copyOf(values, count * 2)
      values(count) = x
      count += 1
    }
  }

  def addAll(other: Partials): Unit = {
    var i = 0
    while (i < other.count) { add(other.values(i)); i += 1 }
  }

  def exact: java.math.BigDecimal = {
    var total = java.math.BigDecimal.ZERO
    var i = 0
    while (i < count) { total = total.add(new java.math.BigDecimal(values(i))); i += 1 }
    total
  }

  /** The exact sum rounded once, as `math.fsum` finishes (with its half-even fix). */
  def rounded: Double = {
    var n = count
    var hi = 0.0
    var lo = 0.0
    if (n > 0) {
      n -= 1
      hi = values(n)
      var exact = true
      while (n > 0 && exact) {
        val x = hi
        n -= 1
        val y = values(n)
        hi = x + y
        lo = y - (hi - x)
        if (lo != 0.0) exact = false
      }
      if (n > 0 && ((lo < 0.0 && values(n - 1) < 0.0) || (lo > 0.0 && values(n - 1) > 0.0))) {
        val y = lo * 2.0
        val x = hi + y
        if (y == x - hi) hi = x
      }
    }
    hi
  }

  def size: Int = count

  def writeValues(buffer: ByteBuffer): Unit = {
    var i = 0
    while (i < count) { buffer.putDouble(values(i)); i += 1 }
  }
}

object Partials {
  def readValues(buffer: ByteBuffer, count: Int): Partials = {
    val values = new Array[Double](math.max(4, count))
    var i = 0
    while (i < count) { values(i) = buffer.getDouble(); i += 1 }
    new Partials(values, count)
  }
}

/** The exact sum of doubles: adding a value or merging another sum changes no bit of the exact
  * total, so the sum rounded once at the end is the same whatever order Spark's tasks add and
  * merge in. asaql/runtime/exact_sum.py computes the same value for the general step.
  *
  * Values of magnitude 2^960 or more are kept apart, scaled by 2^-128 (exactly), so no
  * intermediate sum can overflow; NaN and infinities are flags. */
final class ExactSumState(val partials: Partials, val big: Partials) {
  def this() = this(new Partials, new Partials)

  var seen = false
  var nan = false
  var positiveInfinity = false
  var negativeInfinity = false

  def add(value: Double): Unit = {
    seen = true
    if (value.isNaN) nan = true
    else if (value == Double.PositiveInfinity) positiveInfinity = true
    else if (value == Double.NegativeInfinity) negativeInfinity = true
    else if (math.abs(value) >= ExactSumState.Big) big.add(value * ExactSumState.Down)
    else partials.add(value)
  }

  def merge(other: ExactSumState): Unit = {
    seen |= other.seen
    nan |= other.nan
    positiveInfinity |= other.positiveInfinity
    negativeInfinity |= other.negativeInfinity
    partials.addAll(other.partials)
    big.addAll(other.big)
  }

  /** The exact sum rounded once to the nearest double (ties to even). */
  def value: Double = {
    if (nan || (positiveInfinity && negativeInfinity)) Double.NaN
    else if (positiveInfinity) Double.PositiveInfinity
    else if (negativeInfinity) Double.NegativeInfinity
    else if (big.isZero) partials.rounded
    else partials.exact.add(big.exact.multiply(ExactSumState.Up)).doubleValue()
  }

  /** flags, the two counts, then the partials' values and the big ones' */
  def toBytes: Array[Byte] = {
    val buffer = ByteBuffer.allocate(1 + 8 + 8 * (partials.size + big.size))
    buffer.put(((if (seen) 1 else 0) | (if (nan) 2 else 0) | (if (positiveInfinity) 4 else 0) |
      (if (negativeInfinity) 8 else 0)).toByte)
    buffer.putInt(partials.size).putInt(big.size)
    partials.writeValues(buffer)
    big.writeValues(buffer)
    buffer.array()
  }
}

object ExactSumState {
  private val Big = math.pow(2, 960)
  private val Down = math.pow(2, -128)
  private val Up = new java.math.BigDecimal(java.math.BigInteger.TWO.pow(128))

  def read(bytes: Array[Byte]): ExactSumState = {
    val buffer = ByteBuffer.wrap(bytes)
    val flags = buffer.get()
    val count = buffer.getInt()
    val bigCount = buffer.getInt()
    val partials = Partials.readValues(buffer, count)
    val state = new ExactSumState(partials, Partials.readValues(buffer, bigCount))
    state.seen = (flags & 1) != 0
    state.nan = (flags & 2) != 0
    state.positiveInfinity = (flags & 4) != 0
    state.negativeInfinity = (flags & 8) != 0
    state
  }
}

/** asaql_exact_sum_value(sum): the double of a serialized sum, called by generated code. */
object ExactSumValue {
  def of(bytes: Array[Byte]): Double = ExactSumState.read(bytes).value
}

/** asaql_exact_sum(x): over doubles, or over sums it gave before (merged);
  * → the exact sum, serialized (NULL over no value). asaql_exact_sum_value gives its double. */
case class ExactSum(child: Expression, mutableAggBufferOffset: Int = 0,
                    inputAggBufferOffset: Int = 0)
  extends TypedImperativeAggregate[ExactSumState] with UnaryLike[Expression] {

  override def checkInputDataTypes(): TypeCheckResult = child.dataType match {
    case DoubleType | BinaryType => TypeCheckResult.TypeCheckSuccess
    case other => TypeCheckResult.TypeCheckFailure(
      s"${ExactSum.Name} takes a DOUBLE or a sum it gave (BINARY), not $other")
  }
  override def dataType: DataType = BinaryType
  override def nullable: Boolean = true
  override def prettyName: String = ExactSum.Name

  override def createAggregationBuffer(): ExactSumState = new ExactSumState

  override def update(buffer: ExactSumState, input: InternalRow): ExactSumState = {
    val value = child.eval(input)
    if (value != null) child.dataType match {
      case BinaryType => buffer.merge(ExactSumState.read(value.asInstanceOf[Array[Byte]]))
      case _ => buffer.add(value.asInstanceOf[Double])
    }
    buffer
  }

  override def merge(buffer: ExactSumState, input: ExactSumState): ExactSumState = {
    buffer.merge(input)
    buffer
  }

  override def eval(buffer: ExactSumState): Any = if (buffer.seen) buffer.toBytes else null
  override def serialize(buffer: ExactSumState): Array[Byte] = buffer.toBytes
  override def deserialize(bytes: Array[Byte]): ExactSumState = ExactSumState.read(bytes)

  override def withNewMutableAggBufferOffset(offset: Int): ExactSum =
    copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): ExactSum =
    copy(inputAggBufferOffset = offset)
  override protected def withNewChildInternal(newChild: Expression): ExactSum =
    copy(child = newChild)
}

object ExactSum {
  val Name = "asaql_exact_sum"
  val ValueName = "asaql_exact_sum_value"
}
