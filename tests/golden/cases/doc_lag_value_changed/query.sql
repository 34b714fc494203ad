-- ASA query patterns, "Calculation over past events": LAG in WHERE. Input and output are the
-- documentation's (the first event's LAG is NULL, so NULL <> Make keeps it out).
SELECT
	Make,
	Time
FROM
	Input TIMESTAMP BY Time
WHERE
	LAG(Make, 1) OVER (LIMIT DURATION(minute, 1)) <> Make
