#!/bin/sh
# The stand-in's start script: the official image's run.sh without the browser and TLS.
set -e
if [ "${TLS:-0}" = "1" ]; then
    echo "run.sh: TLS=1 is not supported by this stand-in image" >&2
    exit 1
fi
mkdir -p "${FALKORDB_DATA_PATH}"
# redis-server is PID 1: SIGTERM (docker stop) makes it flush the AOF and exit.
# shellcheck disable=SC2086
exec redis-server ${REDIS_ARGS} --protected-mode no \
    --dir "${FALKORDB_DATA_PATH}" \
    --loadmodule "${FALKORDB_BIN_PATH}/falkordb.so" ${FALKORDB_ARGS}
