package asaql.engine

import java.nio.ByteBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.trees.UnaryLike
import org.apache.spark.sql.types.{BinaryType, DataType, DoubleType}

/** The exact sum of doubles, kept as non-overlapping partials (Shewchuk's algorithm, as Python's
  * `math.fsum`): adding a value or merging another sum changes no bit of the exact total, so
  * the sum rounded once at the end is the same whatever order Spark's tasks add and merge in.
  * asaql/runtime/exact_sum.py computes the same value for the general step.
  *
  * Values of magnitude 2^960 or more are kept apart, scaled by 2^-128 (exactly), so no
  * intermediate sum can overflow; NaN and infinities are flags. */
final class ExactSumState {
  private var partials = new Array[Double](4)
  private var count = 0
  private var bigPartials = new Array[Double](0)
  private var bigCount = 0
  var seen = false
  var nan = false
  var positiveInfinity = false
  var negativeInfinity = false

  def add(value: Double): Unit = {
    seen = true
    if (value.isNaN) nan = true
    else if (value == Double.PositiveInfinity) positiveInfinity = true
    else if (value == Double.NegativeInfinity) negativeInfinity = true
    else if (math.abs(value) >= ExactSumState.Big) addBig(value * ExactSumState.Down)
    else addPartial(value)
  }

  private def addPartial(value: Double): Unit = {
    var x = value
    var i, j = 0
    while (j < count) {
      var y = partials(j)
      if (math.abs(x) < math.abs(y)) { val t = x; x = y; y = t }
      val hi = x + y
      val lo = y - (hi - x)
      if (lo != 0.0) { partials(i) = lo; i += 1 }
      x = hi
      j += 1
    }
    count = i
    if (x != 0.0) {
      if (count == partials.length) partials = java.util.Arrays.copyOf(partials, count * 2)
      partials(count) = x
      count += 1
    }
  }

  private def addBig(scaled: Double): Unit = {
    // rare: swap the arrays, add, swap back
    val (p, c) = (partials, count)
    partials = if (bigPartials.length == 0) new Array[Double](4) else bigPartials
    count = bigCount
    addPartial(scaled)
    bigPartials = partials
    bigCount = count
    partials = p
    count = c
  }

  def merge(other: ExactSumState): Unit = {
    seen |= other.seen
    nan |= other.nan
    positiveInfinity |= other.positiveInfinity
    negativeInfinity |= other.negativeInfinity
    var i = 0
    while (i < other.count) { addPartial(other.partials(i)); i += 1 }
    i = 0
    while (i < other.bigCount) { addBig(other.bigPartials(i)); i += 1 }
  }

  /** The exact sum rounded once to the nearest double (ties to even); NULL if nothing added. */
  def value: Double = {
    if (nan || (positiveInfinity && negativeInfinity)) Double.NaN
    else if (positiveInfinity) Double.PositiveInfinity
    else if (negativeInfinity) Double.NegativeInfinity
    else if (bigCount == 0) ExactSumState.rounded(partials, count)
    else {
      var exact = java.math.BigDecimal.ZERO
      var i = 0
      while (i < count) { exact = exact.add(new java.math.BigDecimal(partials(i))); i += 1 }
      var big = java.math.BigDecimal.ZERO
      i = 0
      while (i < bigCount) { big = big.add(new java.math.BigDecimal(bigPartials(i))); i += 1 }
      exact.add(big.multiply(new java.math.BigDecimal(java.math.BigInteger.TWO.pow(128))))
        .doubleValue()
    }
  }

  def toBytes: Array[Byte] = {
    val buffer = ByteBuffer.allocate(1 + 8 + 8 * (count + bigCount))
    buffer.put(((if (seen) 1 else 0) | (if (nan) 2 else 0) | (if (positiveInfinity) 4 else 0) |
      (if (negativeInfinity) 8 else 0)).toByte)
    buffer.putInt(count).putInt(bigCount)
    var i = 0
    while (i < count) { buffer.putDouble(partials(i)); i += 1 }
    i = 0
    while (i < bigCount) { buffer.putDouble(bigPartials(i)); i += 1 }
    buffer.array()
  }
}

object ExactSumState {
  private val Big = math.pow(2, 960)
  private val Down = math.pow(2, -128)

  def read(bytes: Array[Byte]): ExactSumState = {
    val buffer = ByteBuffer.wrap(bytes)
    val flags = buffer.get()
    val state = new ExactSumState
    state.seen = (flags & 1) != 0
    state.nan = (flags & 2) != 0
    state.positiveInfinity = (flags & 4) != 0
    state.negativeInfinity = (flags & 8) != 0
    val count = buffer.getInt()
    val bigCount = buffer.getInt()
    state.partials = new Array[Double](math.max(4, count))
    var i = 0
    while (i < count) { state.partials(i) = buffer.getDouble(); i += 1 }
    state.count = count
    state.bigPartials = new Array[Double](bigCount)
    i = 0
    while (i < bigCount) { state.bigPartials(i) = buffer.getDouble(); i += 1 }
    state.bigCount = bigCount
    state
  }

  /** The partials' exact sum rounded once, as `math.fsum` finishes (with its half-even fix). */
  private def rounded(p: Array[Double], count: Int): Double = {
    var n = count
    var hi = 0.0
    var lo = 0.0
    if (n > 0) {
      n -= 1
      hi = p(n)
      var exact = true
      while (n > 0 && exact) {
        val x = hi
        n -= 1
        val y = p(n)
        hi = x + y
        lo = y - (hi - x)
        if (lo != 0.0) exact = false
      }
      if (n > 0 && ((lo < 0.0 && p(n - 1) < 0.0) || (lo > 0.0 && p(n - 1) > 0.0))) {
        val y = lo * 2.0
        val x = hi + y
        if (y == x - hi) hi = x
      }
    }
    hi
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
