package asaql.engine

import java.io.ByteArrayOutputStream

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.columnar.{CachedBatch, CachedBatchSerializer}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.storage.StorageLevel
import org.apache.spark.unsafe.Platform

/** A micro-batch cached as Spark's own binary rows, back to back (`spark.sql.cache.serializer=
  * asaql.engine.RowCache`, a static setting of asaql's sessions). asaql caches each
  * micro-batch to read it a few times in the next seconds: the default serializer's columns,
  * with their statistics for skipping batches (a min and max per string column, compared row by
  * row), cost more to build than the parse they save. Rows are stored as they are, read back by
  * pointing at them: no statistics, so no batch is skipped (asaql's reads take every row). */
class RowCache extends CachedBatchSerializer {

  override def supportsColumnarInput(schema: Seq[Attribute]): Boolean = false

  override def supportsColumnarOutput(schema: StructType): Boolean = false

  override def convertInternalRowToCachedBatch(input: RDD[InternalRow], schema: Seq[Attribute],
      storageLevel: StorageLevel, conf: SQLConf): RDD[CachedBatch] = {
    val rowsPerBatch = conf.columnBatchSize
    input.mapPartitions { rows =>
      val toUnsafe = UnsafeProjection.create(schema.map(_.dataType).toArray)
      val buffer = new Array[Byte](4096)  // used only for rows not held in a byte array
      new Iterator[CachedBatch] {
        override def hasNext: Boolean = rows.hasNext
        override def next(): CachedBatch = {
          val bytes = new ByteArrayOutputStream(1 << 16)
          var count = 0
          while (count < rowsPerBatch && rows.hasNext) {
            val row = toUnsafe(rows.next())
            val size = row.getSizeInBytes
            bytes.write(size >>> 24); bytes.write(size >>> 16); bytes.write(size >>> 8)
            bytes.write(size)
            row.writeToStream(bytes, buffer)
            count += 1
          }
          RowBatch(count, bytes.toByteArray)
        }
      }
    }
  }

  override def convertColumnarBatchToCachedBatch(input: RDD[ColumnarBatch],
      schema: Seq[Attribute], storageLevel: StorageLevel, conf: SQLConf): RDD[CachedBatch] =
    throw new UnsupportedOperationException("asaql's row cache takes rows, not columns")

  override def buildFilter(predicates: Seq[Expression], cachedAttributes: Seq[Attribute])
      : (Int, Iterator[CachedBatch]) => Iterator[CachedBatch] = (_, batches) => batches

  override def convertCachedBatchToColumnarBatch(input: RDD[CachedBatch],
      cacheAttributes: Seq[Attribute], selectedAttributes: Seq[Attribute],
      conf: SQLConf): RDD[ColumnarBatch] =
    throw new UnsupportedOperationException("asaql's row cache gives rows, not columns")

  override def convertCachedBatchToInternalRow(input: RDD[CachedBatch],
      cacheAttributes: Seq[Attribute], selectedAttributes: Seq[Attribute],
      conf: SQLConf): RDD[InternalRow] = {
    val fields = cacheAttributes.length
    input.mapPartitions { batches =>
      val select = UnsafeProjection.create(selectedAttributes, cacheAttributes)
      batches.flatMap { case batch: RowBatch =>
        val row = new UnsafeRow(fields)
        var offset = 0
        Iterator.fill(batch.numRows) {
          val data = batch.bytes
          val size = ((data(offset) & 0xff) << 24) | ((data(offset + 1) & 0xff) << 16) |
            ((data(offset + 2) & 0xff) << 8) | (data(offset + 3) & 0xff)
          row.pointTo(data, Platform.BYTE_ARRAY_OFFSET + offset + 4, size)
          offset += 4 + size
          select(row)
        }
      }
    }
  }
}

/** `numRows` rows, each its length (4 bytes, big-endian) and its UnsafeRow bytes. */
case class RowBatch(numRows: Int, bytes: Array[Byte]) extends CachedBatch {
  override def sizeInBytes: Long = bytes.length.toLong
}
