-- JOIN after JOIN: three streams in one SELECT. Each DATEDIFF relates the pair it names: b is
-- within 10 s after a, c within 5 s after b (not after a). System.Timestamp as ASA's left-deep
-- joins give it: the later of the rows joined so far and the new one; a LEFT side without a
-- partner: the rows joined so far + its upper bound.
SELECT a.id, b.v AS bv, c.v AS cv, System.Timestamp() AS ts
INTO out
FROM A a TIMESTAMP BY t
JOIN B b TIMESTAMP BY t ON a.id = b.id AND DATEDIFF(second, a, b) BETWEEN 0 AND 10
LEFT JOIN C c TIMESTAMP BY t ON c.id = b.id AND DATEDIFF(second, b, c) BETWEEN 0 AND 5

-- The same with both DATEDIFFs relating a (a star): c may now be up to 5 s after a.
SELECT a.id, b.v AS bv, c.v AS cv, System.Timestamp() AS ts
INTO star
FROM A a TIMESTAMP BY t
JOIN B b TIMESTAMP BY t ON a.id = b.id AND DATEDIFF(second, a, b) BETWEEN 0 AND 10
LEFT JOIN C c TIMESTAMP BY t ON c.id = a.id AND DATEDIFF(second, a, c) BETWEEN 0 AND 5
