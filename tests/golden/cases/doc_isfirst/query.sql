-- ASA query patterns, "Retrieve the first event in a window": the input and the output are the
-- documentation's.
SELECT 
	License_plate,
	Make,
	Time
FROM 
	Input TIMESTAMP BY Time
WHERE 
	IsFirst(minute, 10) = 1
