package asaql.engine

import java.util

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReader,
  PartitionReaderFactory, Scan, ScanBuilder}
import org.apache.spark.sql.types.{BooleanType, StringType, StructField, StructType,
  TimestampType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.unsafe.types.UTF8String
import org.apache.spark.util.SerializableConfiguration

/** A micro-batch's files as whole texts, each group of files read by one task in the order
  * given: what Spark's text source gives with `wholetext` (the text, its file's path and
  * modification time), except that Spark packs files into tasks by size, largest first, and
  * the out-of-order rule needs a key's files read one after the other in arrival order by one
  * task, so that the task carries the largest time from file to file (ArrivalScan.scala).
  *
  * The groups are read from a JSON file (option `groups`) each time a query over this source is
  * planned, so one DataFrame serves every micro-batch: the driver writes the micro-batch's
  * groups there before running it. A file marked `warmup` is read before a group's own files
  * only for the largest time it carries; its rows are told apart by the caller. */
class OrderedFiles extends TableProvider {
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = OrderedFiles.Schema

  override def getTable(schema: StructType, partitioning: Array[Transform],
                        properties: util.Map[String, String]): Table =
    new OrderedFilesTable(properties.get("groups"))
}

object OrderedFiles {
  val Schema: StructType = StructType(Seq(
    StructField("value", StringType, nullable = false),
    StructField("file_path", StringType, nullable = false),
    StructField("file_modification_time", TimestampType, nullable = false),
    StructField("warmup", BooleanType, nullable = false)))

  /** One file of a group: its path as Spark's file source names it, its modification time in
    * milliseconds, whether it is only read for what it carries. */
  final case class File(path: String, modified: Long, warmup: Boolean)

  final case class Group(files: Array[File]) extends InputPartition

  /** {"groups": [[{"path": …, "modified": ms, "warmup": bool}, …], …]} */
  def groupsOf(text: String): Array[Group] = {
    val root = new ObjectMapper().readTree(text)
    root.get("groups").elements().asScala.map { group =>
      Group(group.elements().asScala.map { file =>
        File(file.get("path").asText(), file.get("modified").asLong(),
          file.has("warmup") && file.get("warmup").asBoolean())
      }.toArray)
    }.toArray
  }
}

class OrderedFilesTable(groups: String) extends Table with SupportsRead {
  override def name(): String = "asaql_ordered_files"
  override def schema(): StructType = OrderedFiles.Schema
  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(TableCapability.BATCH_READ)
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    () => new OrderedFilesScan(groups)
}

class OrderedFilesScan(groups: String) extends Scan with Batch {
  override def readSchema(): StructType = OrderedFiles.Schema
  override def toBatch: Batch = this
  override def description(): String = s"asaql's ordered files ($groups)"

  override def planInputPartitions(): Array[InputPartition] = {
    val path = new Path(groups)
    val conf = SparkSession.active.sessionState.newHadoopConf()
    val in = path.getFileSystem(conf).open(path)
    try OrderedFiles.groupsOf(new String(in.readAllBytes(), "UTF-8")).map(g => g: InputPartition)
    finally in.close()
  }

  override def createReaderFactory(): PartitionReaderFactory =
    new OrderedFilesReaders(new SerializableConfiguration(
      SparkSession.active.sessionState.newHadoopConf()))
}

class OrderedFilesReaders(conf: SerializableConfiguration) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new OrderedFilesReader(partition.asInstanceOf[OrderedFiles.Group], conf.value)
}

/** One row per file of the group that is not empty, in order: the file's whole text (UTF-8,
  * as Spark's text source decodes it). The paths are those of the file source's log
  * (file:///x). */
class OrderedFilesReader(group: OrderedFiles.Group, conf: Configuration)
  extends PartitionReader[InternalRow] {
  private var at = -1
  private var row: InternalRow = _

  /** The next file that is not empty (Spark's text source gives no row for an empty one). */
  override def next(): Boolean = {
    row = null
    while (row == null && at + 1 < group.files.length) {
      at += 1
      val file = group.files(at)
      val path = new Path(new java.net.URI(file.path))
      val in = path.getFileSystem(conf).open(path)
      val bytes = try in.readAllBytes() finally in.close()
      // named as Spark's file source names it in `_metadata.file_path` (file:/x, not file:///x)
      if (bytes.nonEmpty) row = InternalRow(UTF8String.fromBytes(bytes),
        UTF8String.fromString(new Path(path.toString).toUri.toString), file.modified * 1000L,
        file.warmup)
    }
    row != null
  }

  override def get(): InternalRow = row

  override def close(): Unit = ()
}
