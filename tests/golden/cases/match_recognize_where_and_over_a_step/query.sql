-- noFords: read by the second SELECT.
WITH noFords AS (
    SELECT tollBoothId, make, LicensePlate
    FROM input TIMESTAMP BY time
    WHERE make <> 'Ford'
)

-- WHERE beside MATCH_RECOGNIZE filters the match rows: the same rows as the clause in a step
-- and WHERE over the step (golden match_recognize_in_a_step, same input).
SELECT *
INTO filtered
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
WHERE T.cars > 2

-- MATCH_RECOGNIZE over the WITH step: the pattern reads the step's rows (no Fords) in their
-- System.Timestamp order, per booth.
SELECT *
INTO overstep
FROM noFords
MATCH_RECOGNIZE (
    LIMIT DURATION (minute, 1)
    PARTITION BY tollBoothId
    MEASURES
        First(Toyota.LicensePlate) AS firstToyota,
        Count(*) AS cars,
        Last(Lexus.LicensePlate) AS lastLexus
    AFTER MATCH SKIP TO NEXT ROW
    PATTERN (Toyota+ Lexus+)
    DEFINE
        Toyota AS Toyota.make = 'Toyota',
        Lexus AS Lexus.make = 'Lexus'
) AS M
