package asaql.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnaryExpression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}

/** A unary expression that evaluates its child's value with a method of its own, which its
  * generated code calls on the instance: the projection stays in whole-stage code generation
  * (an expression that only evaluates, CodegenFallback, would take it out). NULL in, NULL out. */
trait OwnMethodCode extends UnaryExpression {
  /** The method's name, public, taking the child's value as generated code holds it. */
  protected def ownMethod: String

  /** What the method gives for a value that is not NULL. */
  protected def evaluated(value: Any): Any

  override def eval(input: InternalRow): Any = {
    val value = child.eval(input)
    if (value == null) null else evaluated(value)
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val self = ctx.addReferenceObj(ownMethod + "Of", this, getClass.getName)
    nullSafeCodeGen(ctx, ev, value => s"${ev.value} = $self.$ownMethod($value);")
  }
}
