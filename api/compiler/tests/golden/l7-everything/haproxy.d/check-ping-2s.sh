#!/bin/sh
# Fulcrum ping check: one ICMP echo to the server address.
exec ping -n -q -c 1 -W 2 "$3" >/dev/null 2>&1
