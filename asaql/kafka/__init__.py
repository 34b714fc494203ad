"""Kafka-protocol topics (Kafka, Redpanda, Event Hubs' and IoT Hub's Kafka endpoints) as inputs:
where they are and how to connect (endpoints.py), and what is asked of the broker
(client.py, on confluent-kafka). The Spark side reads them through
asaql/spark/sources/kafka_source.py."""
