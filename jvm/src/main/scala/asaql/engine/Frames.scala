package asaql.engine

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.DataFrame

/** A projection for the driver's Python side in one round trip: PySpark hands a list to the
  * JVM one element per py4j call, and builds each Column with one call per function and
  * operator, so a projection of n columns made from Python cost 3n calls or more. */
object Frames {
  private val Json = new ObjectMapper()

  /** `frame.selectExpr(expressions...)`, the expressions as one JSON array of SQL texts. */
  def select(frame: DataFrame, expressions: String): DataFrame =
    frame.selectExpr(Json.readValue(expressions, classOf[Array[String]]).toIndexedSeq: _*)
}
