SELECT id, v, GetType(v) AS kind, r.Temperature AS temperature,
  GetArrayElement(r.Sensors, 1) AS second
INTO out FROM input TIMESTAMP BY t
