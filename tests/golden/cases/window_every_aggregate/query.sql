SELECT deviceId,
       COUNT(*) AS events, COUNT(reading) AS readings, COUNT(DISTINCT reading) AS distinct_readings,
       SUM(reading) AS total, AVG(reading) AS mean, MIN(reading) AS low, MAX(reading) AS high,
       STDEV(reading) AS sd, STDEVP(reading) AS sdp, VAR(reading) AS v, VARP(reading) AS vp,
       MIN(label) AS first_label,
       TopOne() OVER (ORDER BY reading DESC) AS top_event,
       TopOne(label) OVER (ORDER BY reading ASC) AS label_of_lowest,
       Collect(reading) AS all_readings,
       CollectTop(2) OVER (ORDER BY reading DESC) AS top_two,
       CollectTop(1, label) OVER (ORDER BY reading) AS lowest_label,
       PERCENTILE_CONT(0.5) OVER (ORDER BY reading) AS median,
       PERCENTILE_DISC(0.5) OVER (ORDER BY reading) AS median_disc
FROM input TIMESTAMP BY EventTime
GROUP BY deviceId, TumblingWindow(minute, 1)
