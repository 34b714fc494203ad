-- Clauses beside MATCH_RECOGNIZE read the match rows (T.column) as a SELECT over a step
-- holding the match would: a reference JOIN, WHERE and a SELECT list of expressions, then a
-- GROUP BY of the matches.
SELECT T.tollBoothId AS booth, r.city, T.cars * 10 AS points, T.firstToyota,
       System.Timestamp() AS matchedAt
INTO joined
FROM input TIMESTAMP BY time
MATCH_RECOGNIZE (
    LIMIT DURATION (minute, 1)
    PARTITION BY tollBoothId
    MEASURES
        First(Toyota.LicensePlate) AS firstToyota,
        Count(*) AS cars
    AFTER MATCH SKIP TO NEXT ROW
    PATTERN (Toyota+ Ford* Lexus+)
    DEFINE
        Toyota AS Toyota.make = 'Toyota',
        Ford AS Ford.make = 'Ford',
        Lexus AS Lexus.make = 'Lexus'
) AS T
LEFT JOIN Booths r ON T.tollBoothId = r.id
WHERE T.cars >= 3

SELECT COUNT(*) AS matches, SUM(M.cars) AS cars, System.Timestamp() AS windowEnd
INTO perWindow
FROM input TIMESTAMP BY time
MATCH_RECOGNIZE (
    LIMIT DURATION (minute, 1)
    MEASURES Count(*) AS cars
    AFTER MATCH SKIP TO NEXT ROW
    PATTERN (Toyota+ Ford* Lexus+)
    DEFINE
        Toyota AS Toyota.make = 'Toyota',
        Ford AS Ford.make = 'Ford',
        Lexus AS Lexus.make = 'Lexus'
) AS M
GROUP BY TumblingWindow(minute, 5)
