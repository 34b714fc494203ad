-- T-SQL's FORMAT(value, format [, culture]) with .NET format strings (asaql reads en-US and the
-- invariant culture). Expected values are .NET Framework's for the documented examples.
SELECT seq,
       FORMAT(x, 'N2') AS n2, FORMAT(x, 'F3') AS f3, FORMAT(x, 'N0') AS n0,
       FORMAT(x, 'E') AS e, FORMAT(x, 'e2') AS e2, FORMAT(x, 'G') AS g, FORMAT(x, 'G4') AS g4,
       FORMAT(x, 'C') AS c, FORMAT(x, 'C', '') AS c_invariant, FORMAT(r, 'P1') AS p1,
       FORMAT(i, 'D6') AS d6, FORMAT(i, 'X') AS hex, FORMAT(i, 'x8') AS hex8, FORMAT(i, 'G') AS gi,
       FORMAT(x, '#,##0.00') AS grouped, FORMAT(i, '0000') AS zeros,
       FORMAT(ssn, '###-##-####') AS ssn_text, FORMAT(x, '#,##0.00;(#,##0.00);zero') AS sections,
       FORMAT(r, '0.0%') AS percent,
       FORMAT(CAST(t AS datetime), 'yyyy-MM-dd') AS ymd, FORMAT(t, 'd') AS short_date,
       FORMAT(t, 'D') AS long_date, FORMAT(t, 'd', '') AS short_invariant,
       FORMAT(t, 's') AS sortable, FORMAT(t, 'o') AS round_trip, FORMAT(t, 'u') AS universal,
       FORMAT(t, 'dddd, MMMM dd, yyyy hh:mm:ss tt') AS us_long,
       FORMAT(t, 'ddd MMM d HH:mm:ss.fff') AS custom_ms, FORMAT(t, 'yy-M-d h:m:s t') AS short_parts,
       FORMAT(t, 'HH:mm:ss.FFF') AS trimmed, FORMAT(t, 'T') AS long_time,
       FORMAT(x, NULL) AS null_format
FROM input
