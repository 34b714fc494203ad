-- Collect, TopOne and CollectTop in their analytic form (OVER … LIMIT DURATION), per device in
-- one combined stream: an event exactly 10 s back is out of (t - 10 s, t]; the current event is
-- in; WHEN chooses the events (the current one too); NULL is the lowest ORDER BY key; equal
-- keys are taken in processing order (System.Timestamp, then arrival); no argument: the record.
SELECT seq, dev,
       Collect(v) OVER (PARTITION BY dev LIMIT DURATION(second, 10)) AS vs,
       Collect(seq) OVER (PARTITION BY dev LIMIT DURATION(second, 10) WHEN v > 2) AS big,
       TopOne(seq) OVER (PARTITION BY dev ORDER BY v DESC LIMIT DURATION(second, 10)) AS top_seq,
       TopOne() OVER (ORDER BY v ASC LIMIT DURATION(second, 5)) AS lowest,
       CollectTop(2, seq) OVER (PARTITION BY dev ORDER BY v DESC, seq ASC
                                LIMIT DURATION(second, 10)) AS top2
FROM input TIMESTAMP BY t
