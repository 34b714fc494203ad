package asaql.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.json.{CreateJacksonParser, JacksonParser, JSONOptions}
import org.apache.spark.sql.catalyst.util.{ArrayData, FailureSafeParser, PermissiveMode}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{ArrayType, DataType, StringType, StructField, StructType}
import org.apache.spark.unsafe.types.UTF8String

/** `from_json(text, 'array<string>')` (the elements of a line that holds a JSON array, each as
  * its text), with Spark's own parser and in PERMISSIVE mode as `from_json` runs it, but
  * called by generated code: `from_json` only evaluates, which takes its projection out of
  * whole-stage code generation for every line, arrays or not. */
case class JsonTexts(child: Expression, timeZoneId: String) extends UnaryExpression {

  override def dataType: DataType = ArrayType(StringType, containsNull = true)

  override def nullable: Boolean = true

  @transient private lazy val parser = {
    val options = new JSONOptions(Map.empty[String, String], timeZoneId,
      SQLConf.get.columnNameOfCorruptRecord)
    val raw = new JacksonParser(dataType, options, allowArrayAsStructs = false)
    new FailureSafeParser[UTF8String](
      text => raw.parse(text, CreateJacksonParser.utf8String _, identity[UTF8String]),
      PermissiveMode, StructType(Seq(StructField("value", dataType))),
      options.columnNameOfCorruptRecord)
  }

  def parse(text: UTF8String): ArrayData = {
    val rows = parser.parse(text)
    if (rows.hasNext) rows.next().getArray(0) else null
  }

  override def eval(input: InternalRow): Any = {
    val text = child.eval(input).asInstanceOf[UTF8String]
    if (text == null) null else parse(text)
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val self = ctx.addReferenceObj("asaqlJsonTexts", this, classOf[JsonTexts].getName)
    nullSafeCodeGen(ctx, ev, text =>
      s"""${ev.value} = $self.parse($text);
         |${ev.isNull} = ${ev.value} == null;""".stripMargin)
  }

  override protected def withNewChildInternal(newChild: Expression): JsonTexts =
    copy(child = newChild)

  override def prettyName: String = JsonTexts.Name
}

object JsonTexts {
  val Name = "asaql_json_texts"
}
