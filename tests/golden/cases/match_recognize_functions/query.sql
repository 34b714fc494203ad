-- Scalar functions inside MATCH_RECOGNIZE: in DEFINE, of the current row (UPPER(Toyota.make))
-- and of the last row mapped to another variable (LEN(Toyota.LicensePlate) inside Lexus's
-- condition); in MEASURES, inside an aggregate (Max(LEN(…))) and over aggregates (CONCAT,
-- ROUND: computed on the match row).
SELECT *
INTO output
FROM input TIMESTAMP BY time
MATCH_RECOGNIZE (
    LIMIT DURATION (minute, 1)
    PARTITION BY tollBoothId
    MEASURES
        Max(LEN(Toyota.LicensePlate)) AS longest,
        Last(LOWER(Lexus.make)) AS lexus,
        CONCAT(First(Toyota.LicensePlate), '-', Last(Lexus.LicensePlate)) AS plates,
        ROUND(Avg(LEN(LicensePlate)), 1) AS avgLength
    AFTER MATCH SKIP TO NEXT ROW
    PATTERN (Toyota+ Lexus+)
    DEFINE
        Toyota AS UPPER(Toyota.make) = 'TOYOTA',
        Lexus AS LOWER(make) = 'lexus' AND LEN(Lexus.LicensePlate) >= LEN(Toyota.LicensePlate)
) AS T

-- CAST, LIKE, BETWEEN and IN inside the clause: of a row's fields in DEFINE, over the
-- aggregates in MEASURES.
SELECT *
INTO casts
FROM input TIMESTAMP BY time
MATCH_RECOGNIZE (
    LIMIT DURATION (minute, 1)
    PARTITION BY tollBoothId
    MEASURES
        CAST(Count(*) AS float) AS cars,
        CAST(Max(LEN(LicensePlate)) AS bigint) AS longest
    AFTER MATCH SKIP TO NEXT ROW
    PATTERN (Toyota+ Lexus+)
    DEFINE
        Toyota AS CAST(Toyota.tollBoothId AS bigint) BETWEEN 1 AND 9
            AND UPPER(Toyota.make) LIKE 'TOY%',
        Lexus AS Lexus.make IN ('Lexus', 'LEXUS')
) AS C
