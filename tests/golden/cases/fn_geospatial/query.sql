SELECT id,
    CreatePoint(latitude, longitude) AS point,
    CreateLineString(CreatePoint(latitude, longitude), CreatePoint(10.0, 10.0), CreatePoint(10.5, 10.5)) AS line,
    CreatePolygon(CreatePoint(latitude, longitude), CreatePoint(10.0, 10.0), CreatePoint(10.5, 10.5),
                  CreatePoint(latitude, longitude)) AS polygon,
    CreatePolygon(CreatePoint(0.0, 0.0), CreatePoint(0.0, 1.0), CreatePoint(1.0, 1.0)) AS openRing,
    ROUND(ST_DISTANCE(carPosition, warehouse), 0) AS distance,
    ST_WITHIN(deliveryDestination, warehouseArea) AS inside,
    ST_INTERSECTS(pavedRoad, dirtRoad) AS meets,
    ST_OVERLAPS(datacenterArea, stormArea) AS overlapping
INTO output
FROM input
