-- ASA "Common query patterns", periodic output: the last event of every 5-second hop of a
-- 300-second window (the documentation's input, read as UTC; it shows the first ten rows).
SELECT System.Timestamp() AS Window_end, TopOne() OVER (ORDER BY Time DESC) AS Last_event
FROM Input TIMESTAMP BY Time
GROUP BY HOPPINGWINDOW(second, 300, 5)
