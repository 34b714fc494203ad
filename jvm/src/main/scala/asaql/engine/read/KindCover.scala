package asaql.engine

import com.fasterxml.jackson.core.{JsonFactory, JsonParser, JsonToken}

/** Whether a line is one record whose every value a merged record type already covers (merging
  * the line's type into it would give it again), read without building the line's type: no
  * names sorted, no set of them, no case folded. Anything else (a new field or type, a key
  * twice, text after the record, a value under a mixed field that is not a scalar, bad JSON)
  * says no. InferJson skips such lines; JsonRecord tells with it whether an event fits the
  * schema a sample of the input gave. */
final class KindCover(factory: JsonFactory, maxDepth: Int) {
  // The merged records' fields by name, per record (they change only when a line adds to
  // them), and whether a top-level one has two names that differ only in case.
  private val lookups =
    new java.util.IdentityHashMap[Kind.Record, java.util.HashMap[String, Integer]]()
  private val caseTwins = new java.util.IdentityHashMap[Kind.Record, java.lang.Boolean]()

  def covers(merged: Kind.Record, bytes: Array[Byte], offset: Int, size: Int): Boolean = {
    if (caseTwins.computeIfAbsent(merged, r => java.lang.Boolean.valueOf(
        r.fields.map(_._1.toLowerCase(java.util.Locale.ROOT)).distinct.length != r.fields.length))
        .booleanValue()) return false
    val parser = factory.createParser(bytes, offset, size)
    try {
      parser.nextToken() == JsonToken.START_OBJECT && recordCovered(merged, parser, 1) &&
        parser.nextToken() == null
    } catch {
      case _: java.io.IOException | _: InferJson.Decline => false
    } finally parser.close()
  }

  /** Whether the line's JSON breaks off before its first value, or inside it when it is an
    * object: Spark's inference then takes nothing from the line but its corrupt-record
    * column (JsonInferSchema, PERMISSIVE), whatever the line holds. */
  def brokenObject(bytes: Array[Byte], offset: Int, size: Int): Boolean = {
    val parser = factory.createParser(bytes, offset, size)
    try {
      parser.nextToken() == JsonToken.START_OBJECT && { parser.skipChildren(); false }
    } catch {
      case _: java.io.IOException => true
    } finally parser.close()
  }

  private def recordCovered(merged: Kind.Record, parser: JsonParser, depth: Int): Boolean = {
    if (depth > maxDepth || merged.fields.length > 64) return false
    if (lookups.size > 4096) { lookups.clear(); caseTwins.clear() }
    val byName = lookups.computeIfAbsent(merged, r => {
      val names = new java.util.HashMap[String, Integer]()
      r.fields.zipWithIndex.foreach { case ((name, _), i) => names.put(name, i) }
      names
    })
    var seen = 0L
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      val at = byName.get(parser.getCurrentName)
      if (at == null || (seen & (1L << at)) != 0) return false
      seen |= 1L << at
      parser.nextToken()
      if (!valueCovered(merged.fields(at)._2, parser, depth)) return false
    }
    true
  }

  private def valueCovered(merged: Kind, parser: JsonParser, depth: Int): Boolean =
    parser.currentToken() match {
      case JsonToken.START_OBJECT => merged match {
        case record: Kind.Record => recordCovered(record, parser, depth + 1)
        case _ => false
      }
      case JsonToken.START_ARRAY => merged match {
        case Kind.Items(element) if depth + 1 <= maxDepth =>
          while (parser.nextToken() != JsonToken.END_ARRAY) {
            if (!valueCovered(element, parser, depth + 1)) return false
          }
          true
        case _ => false
      }
      case _ => Kind.merge(merged, Kind.scalar(parser)) == merged
    }
}
