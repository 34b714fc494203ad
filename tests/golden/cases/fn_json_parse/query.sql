WITH ParsedEvents AS (
    SELECT id, JSON_PARSE(eventrow.current) AS ParsedCurrent FROM Input
)
SELECT id, ParsedCurrent.SalesOrderID, ParsedCurrent.Items, ParsedCurrent.Missing
INTO out FROM ParsedEvents
