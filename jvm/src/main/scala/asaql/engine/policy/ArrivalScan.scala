package asaql.engine

import java.util.{HashMap => JHashMap}

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, Nondeterministic}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeGenerator, CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{BooleanType, DataType, LongType}
import org.apache.spark.unsafe.types.UTF8String

/** The policy's out-of-order rule without a shuffle. The rule needs, for every event, the
  * largest System.Timestamp accepted before it in arrival order among its key's events. When a
  * key's events come in segments (one file's events of the key, read in order by one task) that
  * follow each other in arrival order, that is the largest of the segments before (worked out
  * in the driver from one aggregate: the seed) and of the segment's own rows before it (kept
  * here, row by row, in the order the task reads them). Both expressions keep state per
  * partition, so they are `Nondeterministic`: Spark evaluates them once per row, in the
  * partition's order, and moves no filter below them. Their generated code calls the
  * expression object's own method (`ArrivalScan.call`): an expression without generated code
  * (CodegenFallback) keeps its whole projection out of whole-stage code generation, and each
  * such stage boundary copies every column of every row. */
object ArrivalScan {
  val BreakName = "asaql_arrival_break"
  val PriorName = "asaql_prior_max"
  /** The seeds' file for every file not named in them (a file's path is never "*"). */
  val AnyFile = "*"

  /** A segment's running values: its last row's position and arrival, the largest value
    * before that row, the largest up to it. */
  final class Running(var position: Long, var arrival: Long, var before: java.lang.Long,
                      var through: java.lang.Long)

  /** Per partition: each (file, key)'s running values. A task reads a file's rows one after the
    * other, so the file of the row before is kept and compared first (no hash of the path). */
  final class Segments {
    private val byFile = new JHashMap[UTF8String, JHashMap[UTF8String, Running]]()
    private var lastFile: UTF8String = _
    private var current: JHashMap[UTF8String, Running] = _

    def get(file: UTF8String, key: UTF8String): Running = {
      if (lastFile == null || !lastFile.equals(file)) {
        lastFile = file.copy()
        current = byFile.get(lastFile)
        if (current == null) {
          current = new JHashMap[UTF8String, Running]()
          byFile.put(lastFile, current)
        }
      }
      current.get(key)
    }

    /** After `get` returned null for this (file, key). */
    def add(key: UTF8String, running: Running): Unit = current.put(key.copy(), running)
  }

  /** Generated code for `expression`: its children's code, then `method` of the expression
    * object (initialized for the partition) with their values (null for a NULL), as `boxed`
    * (a java.lang.Long, null for NULL) or `boolean`. */
  def call(ctx: CodegenContext, ev: ExprCode, expression: Expression with Nondeterministic,
           method: String, boxed: Boolean): ExprCode = {
    val ref = ctx.addReferenceObj("arrivalScan", expression, expression.getClass.getName)
    ctx.addPartitionInitializationStatement(s"$ref.initialize(partitionIndex);")
    val codes = expression.children.map(_.genCode(ctx))
    val args = expression.children.zip(codes).map { case (child, code) =>
      val javaType = CodeGenerator.boxedType(child.dataType)
      s"(${code.isNull} ? null : ($javaType) ${code.value})"
    }.mkString(", ")
    val computed = codes.map(_.code.toString).mkString("\n")
    if (boxed) {
      val result = ctx.freshName("result")
      ev.copy(code = code"""
        |$computed
        |java.lang.Long $result = $ref.$method($args);
        |boolean ${ev.isNull} = $result == null;
        |long ${ev.value} = ${ev.isNull} ? -1L : $result.longValue();
        |""".stripMargin)
    } else {
      ev.copy(code = code"""
        |$computed
        |boolean ${ev.value} = $ref.$method($args);
        |""".stripMargin, isNull = FalseLiteral)
    }
  }
}

/** asaql_arrival_break(file, key, arrival, position): true when the row comes before the
  * previous row of its segment (file, key) in arrival or in position: the segment is not read
  * in arrival order, and the driver falls back to a sort. A row without an arrival, file or key
  * is a break too (no order to rely on). */
case class ArrivalBreak(file: Expression, key: Expression, arrival: Expression,
                        position: Expression)
  extends Expression with Nondeterministic {

  @transient private var segments: ArrivalScan.Segments = _

  override protected def initializeInternal(partitionIndex: Int): Unit =
    segments = new ArrivalScan.Segments

  override protected def evalInternal(input: InternalRow): Any =
    next(file.eval(input), key.eval(input), arrival.eval(input), position.eval(input))

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    ArrivalScan.call(ctx, ev, this, "next", boxed = false)

  /** The row's answer from its values (boxed, null for NULL), the state moved on. */
  def next(fileValue: Any, keyValue: Any, at: Any, where: Any): Boolean = {
    val f = fileValue.asInstanceOf[UTF8String]
    val k = keyValue.asInstanceOf[UTF8String]
    if (f == null || k == null || at == null || where == null) return true
    val a = at.asInstanceOf[Long]
    val p = where.asInstanceOf[Long]
    val previous = segments.get(f, k)
    if (previous == null) {
      segments.add(k, new ArrivalScan.Running(p, a, null, null))
      false
    } else {
      val broken = a < previous.arrival || p < previous.position
      previous.arrival = a
      previous.position = p
      broken
    }
  }

  override def nullable: Boolean = false
  override def dataType: DataType = BooleanType
  override def children: Seq[Expression] = Seq(file, key, arrival, position)
  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): ArrivalBreak =
    copy(file = c(0), key = c(1), arrival = c(2), position = c(3))
  override def prettyName: String = ArrivalScan.BreakName
}

/** asaql_prior_max(file, key, position, value, seeds[, carry]): the largest `value` of the
  * segment's rows read before this one in the task, and of the segment's seed (`seeds`: a JSON
  * object, file → key → the largest value before the segment, or null; the file "*" stands for
  * every file not named); NULL when there is none. `carry` (a literal, false when not given):
  * a segment's seed is also at least the largest of the key's segment the task read before it,
  * for a task that reads a key's files in arrival order (OrderedFiles.scala). A row evaluated
  * again (same position, as when Spark evaluates an expression twice) gets the same answer. */
case class PriorMax(file: Expression, key: Expression, position: Expression, value: Expression,
                    seeds: Expression, carry: Expression)
  extends Expression with Nondeterministic {

  @transient private var segments: ArrivalScan.Segments = _
  // the key's last segment in this task (carry)
  @transient private var lastOfKey: JHashMap[UTF8String, ArrivalScan.Running] = _
  @transient private lazy val carrying: Boolean = carry.eval(null) == true
  @transient private lazy val seedOf: JHashMap[String, java.lang.Long] = {
    val found = new JHashMap[String, java.lang.Long]()
    val text = seeds.eval(null)
    if (text != null) {
      new ObjectMapper().readTree(text.toString).fields().forEachRemaining { byFile =>
        byFile.getValue.fields().forEachRemaining { entry =>
          val node = entry.getValue
          found.put(byFile.getKey + "\u0000" + entry.getKey,
            if (node.isNull) null else java.lang.Long.valueOf(node.asLong()))
        }
      }
    }
    found
  }

  override protected def initializeInternal(partitionIndex: Int): Unit = {
    segments = new ArrivalScan.Segments
    lastOfKey = new JHashMap[UTF8String, ArrivalScan.Running]()
  }

  override protected def evalInternal(input: InternalRow): Any =
    next(file.eval(input), key.eval(input), position.eval(input), value.eval(input), null, null)

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    ArrivalScan.call(ctx, ev, this, "next", boxed = true)

  /** The row's answer from its values (boxed, null for NULL; the settings are literals, read
    * once), the state moved on. */
  def next(fileValue: Any, keyValue: Any, where: Any, v: Any, seedsText: Any,
           carryValue: Any): java.lang.Long = {
    val f = fileValue.asInstanceOf[UTF8String]
    val k = keyValue.asInstanceOf[UTF8String]
    if (f == null || k == null) return null
    val p = where.asInstanceOf[Long]
    var state = segments.get(f, k)
    if (state == null) {
      val segment = f.toString + "\u0000" + k.toString
      var seed = if (seedOf.containsKey(segment)) seedOf.get(segment)
        else seedOf.get(ArrivalScan.AnyFile + "\u0000" + k.toString)
      if (carrying) {
        val before = lastOfKey.get(k)
        if (before != null && before.through != null &&
            (seed == null || before.through.longValue > seed.longValue)) seed = before.through
      }
      state = new ArrivalScan.Running(Long.MinValue, 0L, seed, seed)
      segments.add(k, state)
      if (carrying) lastOfKey.put(k.copy(), state)
    } else if (state.position == p) {
      return state.before
    }
    state.position = p
    state.before = state.through
    if (v != null) {
      val x = v.asInstanceOf[Long]
      if (state.through == null || x > state.through) state.through = java.lang.Long.valueOf(x)
    }
    state.before
  }

  override def nullable: Boolean = true
  override def dataType: DataType = LongType
  override def children: Seq[Expression] = Seq(file, key, position, value, seeds, carry)
  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): PriorMax =
    copy(file = c(0), key = c(1), position = c(2), value = c(3), seeds = c(4), carry = c(5))
  override def prettyName: String = ArrivalScan.PriorName
}
