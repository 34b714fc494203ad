package asaql.engine

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Literal}
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{ArrayType, DataType, DoubleType, IntegerType, StringType,
  StructType}

/** The SQL functions the JVM engine gives asaql, by name: registered in a session by the
  * extension (`spark.sql.extensions=asaql.engine.Extensions`, which also serves a Spark Connect
  * server started with the jar) or, in a running session whose classpath has the jar, by
  * `Functions.register`. Python calls them with `call_function`, so classic and Connect
  * sessions build the same plans. */
object Functions {
  /** The engine's version: the Python side checks it against the jar it expects. */
  val Version = "17"

  private type Builder = Seq[Expression] => Expression

  val all: Seq[(FunctionIdentifier, ExpressionInfo, Builder)] = Seq(
    (FunctionIdentifier(JsonRecord.Name),
      new ExpressionInfo(classOf[JsonRecord].getName, JsonRecord.Name),
      jsonRecord _),
    zoned(JsonTexts.Name, classOf[JsonTexts], JsonTexts(_, _)),
    zoned(IsoTimestamp.Name, classOf[IsoTimestamp], IsoTimestamp(_, _)),
    zoned(DatetimeText.Name, classOf[DatetimeText], DatetimeText(_, _)),
    zoned(JsonLine.Name, classOf[JsonLine], JsonLine(_, _)),
    (FunctionIdentifier(OrderedLines.Name),
      new ExpressionInfo(classOf[OrderedLine].getName, OrderedLines.Name),
      (args: Seq[Expression]) => OrderedLine(args)),
    text("asaql_bracket_depth", "depth", IntegerType, 1),
    text("asaql_top_level_values", "topLevelValues", IntegerType, 1),
    text("asaql_repeated_key", "repeatedKey", StringType, 2),
    text("asaql_partition_digits", "partitionDigits", StringType, 1),
    text("asaql_arrival_text", "arrivalText", StringType, 1),
    static(TextLinesClass, TextLines.getClass.getName, TextLines.Name, "lines",
      ArrayType(StringType, containsNull = false), 1),
    (FunctionIdentifier(ExactSum.Name),
      new ExpressionInfo(classOf[ExactSum].getName, ExactSum.Name),
      (args: Seq[Expression]) => {
        require(args.length == 1, s"${ExactSum.Name} takes 1 argument")
        ExactSum(args.head)
      }),
    (FunctionIdentifier(ExactSum.ValueName),
      new ExpressionInfo(ExactSumValue.getClass.getName, ExactSum.ValueName),
      (args: Seq[Expression]) => {
        require(args.length == 1, s"${ExactSum.ValueName} takes 1 argument")
        StaticInvoke(ExactSumValueClass, DoubleType, "of", args, propagateNull = true,
          returnNullable = false)
      }),
    (FunctionIdentifier(ArrivalScan.BreakName),
      new ExpressionInfo(classOf[ArrivalBreak].getName, ArrivalScan.BreakName),
      (args: Seq[Expression]) => {
        require(args.length == 4, s"${ArrivalScan.BreakName} takes 4 arguments")
        ArrivalBreak(args(0), args(1), args(2), args(3))
      }),
    (FunctionIdentifier(ArrivalScan.PriorName),
      new ExpressionInfo(classOf[PriorMax].getName, ArrivalScan.PriorName),
      (args: Seq[Expression]) => {
        require(args.length == 5 || args.length == 6,
          s"${ArrivalScan.PriorName} takes 5 or 6 arguments")
        require(args.drop(4).forall(_.foldable), "asaql's engine functions take literal settings")
        PriorMax(args(0), args(1), args(2), args(3), args(4),
          if (args.length == 6) args(5) else Literal(false))
      }),
    (FunctionIdentifier(InferJson.Name),
      new ExpressionInfo(classOf[InferJson].getName, InferJson.Name),
      (args: Seq[Expression]) => {
        require(args.length == 2, s"${InferJson.Name} takes a line and a depth")
        InferJson(args.head, literal(args(1)).toInt)
      }),
    (FunctionIdentifier(GroupedStats.Name),
      new ExpressionInfo(classOf[GroupedStats].getName, GroupedStats.Name),
      (args: Seq[Expression]) => {
        require(args.length >= 3, s"${GroupedStats.Name} takes ops, a group count, columns")
        GroupedStats(literal(args(0)), literal(args(1)).toInt, args.drop(2))
      }),
    (FunctionIdentifier(LeastBy.Name),
      new ExpressionInfo(classOf[LeastBy].getName, LeastBy.Name),
      (args: Seq[Expression]) => LeastBy(args)))

  /** An expression of one argument and the session's time zone. */
  private def zoned(name: String, kind: Class[_], build: (Expression, String) => Expression) =
    (FunctionIdentifier(name), new ExpressionInfo(kind.getName, name),
      (args: Seq[Expression]) => {
        require(args.length == 1, s"$name takes 1 argument")
        build(args.head, SQLConf.get.sessionLocalTimeZone)
      })

  /** A method of RecordText, called by generated code (NULL in, NULL out). */
  private def text(name: String, method: String, result: DataType, arity: Int) =
    static(RecordTextClass, RecordText.getClass.getName, name, method, result, arity)

  /** A static method of `owner` (an object's forwarder), called by generated code (NULL in,
    * NULL out; a text result may be NULL too). */
  private def static(owner: => Class[_], info: String, name: String, method: String,
                     result: DataType, arity: Int) =
    (FunctionIdentifier(name), new ExpressionInfo(info, name),
      (args: Seq[Expression]) => {
        require(args.length == arity, s"$name takes $arity argument(s)")
        StaticInvoke(owner, result, method, args, propagateNull = true,
          returnNullable = result == StringType)
      })

  // the class whose static methods forward to the object's
  private lazy val RecordTextClass = Class.forName("asaql.engine.RecordText")
  private lazy val ExactSumValueClass = Class.forName("asaql.engine.ExactSumValue")
  private lazy val TextLinesClass = Class.forName("asaql.engine.TextLines")

  /** asaql_json_record(text, schema_json, options_json, max_depth[, sample_kind_json]) */
  private def jsonRecord(args: Seq[Expression]): Expression = {
    require(args.length == 4 || args.length == 5, s"${JsonRecord.Name} takes 4 or 5 arguments")
    val schema = DataType.fromJson(literal(args(1))).asInstanceOf[StructType]
    val options = jsonMap(literal(args(2)))
    JsonRecord(args.head, schema, options, SQLConf.get.sessionLocalTimeZone,
      literal(args(3)).toInt, if (args.length == 5) literal(args(4)) else "")
  }

  private def literal(argument: Expression): String = {
    require(argument.foldable, "asaql's engine functions take literal settings")
    String.valueOf(argument.eval())
  }

  private def jsonMap(text: String): Map[String, String] = {
    val node = new ObjectMapper().readTree(text)
    val entries = Map.newBuilder[String, String]
    node.fields().forEachRemaining(e => entries += e.getKey -> e.getValue.asText())
    entries.result()
  }

  /** Registers the functions in a session that was started without the extension. */
  def register(session: SparkSession): Unit = {
    val registry = session.asInstanceOf[org.apache.spark.sql.classic.SparkSession]
      .sessionState.functionRegistry
    all.foreach { case (name, info, builder) => registry.registerFunction(name, info, builder) }
  }

  def version(): String = Version
}

/** `spark.sql.extensions=asaql.engine.Extensions` */
class Extensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit =
    Functions.all.foreach(extensions.injectFunction)
}
