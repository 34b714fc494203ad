-- A MATCH_RECOGNIZE in a WITH step: a SELECT reads its rows, filters and renames them.
WITH Matches AS (
    SELECT *
    FROM input TIMESTAMP BY time
    MATCH_RECOGNIZE (
        LIMIT DURATION (minute, 1)
        PARTITION BY tollBoothId
        MEASURES
            First(Toyota.LicensePlate) AS firstToyota,
            Count(*) AS cars,
            Count(Ford.LicensePlate) AS fords,
            Classifier() AS lastVariable
        AFTER MATCH SKIP TO NEXT ROW
        PATTERN (Toyota+ Ford* Lexus+)
        DEFINE
            Toyota AS Toyota.make = 'Toyota',
            Ford AS Ford.make = 'Ford',
            Lexus AS Lexus.make = 'Lexus'
    ) AS T
)
SELECT tollBoothId AS booth, firstToyota, cars, fords, lastVariable, System.Timestamp() AS matchedAt
INTO output
FROM Matches
WHERE cars > 2
