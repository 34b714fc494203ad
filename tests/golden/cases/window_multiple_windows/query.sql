-- Windows(…): the query runs once per window and the output is the union of the results;
-- System.Window().Id names the window a row comes from (NULL without ids).
SELECT System.Window().Id, dev, COUNT(*) AS n, System.Timestamp() AS ts
INTO withIds
FROM input TIMESTAMP BY t
GROUP BY dev, Windows(Window('10 s', TumblingWindow(second, 10)),
                      Window('20 s hop 10', HoppingWindow(second, 20, 10)))

-- without ids, and a snapshot among the windows (ASA's snapshot page shows it in Windows)
SELECT System.Window().Id AS windowId, COUNT(*) AS n, System.Timestamp() AS ts
INTO withoutIds
FROM input TIMESTAMP BY t
GROUP BY Windows(TumblingWindow(second, 20), System.Timestamp())
HAVING COUNT(*) > 1
