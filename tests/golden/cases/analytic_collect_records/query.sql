-- Collect, TopOne and CollectTop OVER (… LIMIT DURATION …) with records, arrays, NULL records,
-- System.Timestamp() and whole events as values, and in WHERE (evaluated before it).
SELECT seq,
  Collect(System.Timestamp()) OVER (LIMIT DURATION(second, 3)) AS stamps,
  Collect(rec) OVER (LIMIT DURATION(second, 3)) AS recs,
  TopOne(rec) OVER (ORDER BY seq DESC LIMIT DURATION(second, 3)) AS toprec,
  CollectTop(1) OVER (ORDER BY t DESC LIMIT DURATION(second, 3)) AS lastev,
  GetArrayLength(Collect() OVER (LIMIT DURATION(second, 3))) AS n
INTO output
FROM input TIMESTAMP BY t
WHERE GetArrayLength(Collect(seq) OVER (LIMIT DURATION(second, 2))) >= 1
