-- Runs once, on an empty data directory.
CREATE ROLE orders LOGIN;
CREATE DATABASE orders OWNER orders;
CREATE ROLE notifier LOGIN;
CREATE DATABASE notifier OWNER notifier;
