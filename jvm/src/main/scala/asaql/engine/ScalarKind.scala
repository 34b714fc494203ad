package asaql.engine

import org.apache.spark.sql.types.{BooleanType, ByteType, DataType, DoubleType, FloatType,
  IntegerType, LongType, NullType, ShortType, StringType}

/** A flat field's type as the engine's own loops switch on it (FlatRecord reads such fields,
  * JsonLine writes them): a small number, as matching on a Spark type (its equality) per value
  * costs more than the value. */
object ScalarKind {
  val Text = 0
  val Long = 1
  val Double = 2
  val Float = 3
  val Bool = 4
  val Int = 5
  val Short = 6
  val Byte = 7
  val Null = 8
  val Other = -1

  def of(kind: DataType): Int = kind match {
    case StringType if kind == StringType => Text  // the default collation, no CHAR/VARCHAR
    case LongType => Long
    case IntegerType => Int
    case ShortType => Short
    case ByteType => Byte
    case DoubleType => Double
    case FloatType => Float
    case BooleanType => Bool
    case NullType => Null
    case _ => Other
  }
}
