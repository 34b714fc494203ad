package asaql.engine

import java.io.{BufferedOutputStream, FileInputStream, FileOutputStream, InputStream}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeGenerator, CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType, TimestampType}
import org.apache.spark.unsafe.types.UTF8String

/** asaql_ordered_line(order values…, line): a line of a single `.jsonl` output as a task
  * stages it: the values the file is ordered by as a prefix whose bytes compare as the values
  * do (NULLs first, as Spark's ascending sort), then the line. Each task sorts its own lines
  * and the driver merges the tasks' files by their bytes (OrderedLines.merge), where Spark
  * would send every line to one task to sort them all there.
  *
  * A value: 0x01 for NULL; else 0x02 and a number as 11 digits of its bits with the sign
  * flipped (4 bits, then 6 each, every digit written as 0x30 + its value: 11 bytes, where 16
  * hex digits made a staged line ~20 bytes longer), or a text's bytes with those below 0x0C
  * (a line's end among them) written as 0x03 and the byte + 0x40, then 0x00. No prefix is the
  * start of another, so the prefixes and lines compare as the tuples. */
case class OrderedLine(children: Seq[Expression]) extends Expression {

  override def dataType: DataType = StringType
  override def nullable: Boolean = false

  override def checkInputDataTypes(): org.apache.spark.sql.catalyst.analysis.TypeCheckResult = {
    val fine = children.nonEmpty && children.last.dataType == StringType &&
      children.init.forall(c => OrderedLines.kindOf(c.dataType) != '?')
    if (fine) org.apache.spark.sql.catalyst.analysis.TypeCheckResult.TypeCheckSuccess
    else org.apache.spark.sql.catalyst.analysis.TypeCheckResult.TypeCheckFailure(
      s"${OrderedLines.Name} takes numbers, timestamps and texts, then a text")
  }

  @transient private lazy val kinds: Array[Char] =
    children.init.map(c => OrderedLines.kindOf(c.dataType)).toArray
  @transient private lazy val buffer = new Growing

  def line(values: Array[AnyRef]): UTF8String = {
    buffer.size = 0
    var i = 0
    while (i < kinds.length) {
      val value = values(i)
      if (value == null) buffer.add(1)
      else {
        buffer.add(2)
        if (kinds(i) == 'n') buffer.digits(value.asInstanceOf[Number].longValue() ^ Long.MinValue)
        else buffer.escaped(value.asInstanceOf[UTF8String])
      }
      i += 1
    }
    val text = values(kinds.length).asInstanceOf[UTF8String]
    if (text != null) buffer.raw(text)
    UTF8String.fromBytes(java.util.Arrays.copyOf(buffer.bytes, buffer.size))
  }

  override def eval(input: InternalRow): Any =
    line(children.map(_.eval(input).asInstanceOf[AnyRef]).toArray)

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val self = ctx.addReferenceObj("asaqlOrderedLine", this, classOf[OrderedLine].getName)
    val codes = children.map(_.genCode(ctx))
    val values = ctx.freshName("values")
    val filled = children.zip(codes).zipWithIndex.map { case ((child, code), i) =>
      val boxed = CodeGenerator.boxedType(child.dataType)
      s"$values[$i] = ${code.isNull} ? null : ($boxed) ${code.value};"
    }.mkString("\n")
    ev.copy(code = code"""
      |${codes.map(_.code.toString).mkString("\n")}
      |Object[] $values = new Object[${children.length}];
      |$filled
      |UTF8String ${ev.value} = $self.line($values);
      |boolean ${ev.isNull} = false;""".stripMargin)
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): OrderedLine =
    copy(children = c)

  override def prettyName: String = OrderedLines.Name
}

object OrderedLines {
  val Name = "asaql_ordered_line"
  val NumberDigits = 11

  /** 'n': a number (its bits), 's': a text, '?': neither. */
  def kindOf(kind: DataType): Char = kind match {
    case TimestampType | LongType | IntegerType => 'n'
    case StringType => 's'
    case _ => '?'
  }

  /** Appends to `target` the lines of `parts` (each ordered by its bytes, as OrderedLine wrote
    * them) in the order of their bytes, each without its prefix; → the lines written. */
  def merge(parts: java.util.List[String], kinds: String, target: String): Long = {
    val readers = (0 until parts.size).map(i => new Lines(new FileInputStream(parts.get(i))))
    val out = new BufferedOutputStream(new FileOutputStream(target, true), 1 << 16)
    var written = 0L
    try {
      val heads = new java.util.PriorityQueue[(Array[Byte], Lines)](
        math.max(1, readers.length), (a: (Array[Byte], Lines), b: (Array[Byte], Lines)) =>
          java.util.Arrays.compareUnsigned(a._1, b._1))
      readers.foreach { r => val first = r.next(); if (first != null) heads.add((first, r)) }
      while (!heads.isEmpty) {
        val (line, reader) = heads.poll()
        val start = prefixLength(line, kinds)
        out.write(line, start, line.length - start)
        out.write('\n')
        written += 1
        val following = reader.next()
        if (following != null) heads.add((following, reader))
      }
    } finally {
      out.close()
      readers.foreach(_.close())
    }
    written
  }

  private def prefixLength(line: Array[Byte], kinds: String): Int = {
    var at = 0
    var k = 0
    while (k < kinds.length) {
      if (line(at) == 1) at += 1
      else if (kinds.charAt(k) == 'n') at += 1 + NumberDigits
      else {
        at += 1
        while (line(at) != 0) at += (if (line(at) == 3) 2 else 1)
        at += 1
      }
      k += 1
    }
    at
  }

  /** A file's lines ('\n' ends one), as byte arrays, read in blocks. */
  private final class Lines(in: InputStream) {
    private val block = new Array[Byte](1 << 16)
    private var at = 0
    private var end = 0
    private val line = new Growing

    def next(): Array[Byte] = {
      line.size = 0
      var any = false
      while (true) {
        if (at == end) {
          end = in.read(block)
          at = 0
          if (end <= 0) {
            end = 0
            return if (any) java.util.Arrays.copyOf(line.bytes, line.size) else null
          }
        }
        any = true
        var i = at
        while (i < end && block(i) != '\n') i += 1
        line.append(block, at, i - at)
        if (i < end) {
          at = i + 1
          return java.util.Arrays.copyOf(line.bytes, line.size)
        }
        at = end
      }
      null
    }

    def close(): Unit = in.close()
  }
}
