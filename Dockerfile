# Broker image of the Kafka compression distribution (Apache Kafka 4.3.1 plus the
# patch series in patches/). Built by `./build.sh image` (docker/images.sh) from
# the distribution `./build.sh` assembles; by hand, after ./build.sh:
#   docker build -t localhost/kafka-compress:4.3.1-compress.1 .
# The build context is the repository root; .dockerignore lets only the
# distribution and docker/ through.
ARG BASE_IMAGE=debian:trixie-slim
FROM ${BASE_IMAGE}

ARG DIST_DIR=build/dist/kafka_2.13-4.3.1-compress.1
ARG KAFKA_DIST_VERSION=4.3.1-compress.1
ARG KAFKA_VERSION=4.3.1
ARG KAFKA_COMMIT_ID=26b251a451ce941d
ARG KAFKA_SERIES=""

LABEL org.opencontainers.image.title="kafka-compress" \
      org.opencontainers.image.description="Apache Kafka ${KAFKA_VERSION} broker with pluggable compression providers (native ISA-L/libdeflate gzip, Intel QAT gzip)" \
      org.opencontainers.image.version="${KAFKA_DIST_VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      io.kafkacompress.kafka.version="${KAFKA_VERSION}" \
      io.kafkacompress.upstream.commit="${KAFKA_COMMIT_ID}" \
      io.kafkacompress.series="${KAFKA_SERIES}"

# Runtime only: the JRE, the QAT user-space stack (QATzip, qatlib, USDM; they
# fall back to software without a QAT device) and the native deflate libraries
# of the software gzip provider. No compilers, no apt lists left behind. The
# JRE's CDS archives for -XX:+UseCompactObjectHeaders (opt-in, 33 MB) go too:
# with that flag the JVM just starts without a shared archive.
# (man1 must exist for the JRE's update-alternatives, on -slim bases without docs)
RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    mkdir -p /usr/share/man/man1; \
    apt-get update; \
    apt-get install -y --no-install-recommends \
        openjdk-25-jre-headless \
        libqatzip3 libqat4 libusdm0 \
        libisal2 libdeflate0; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /usr/share/man/* \
           /usr/lib/jvm/java-25-openjdk-*/lib/server/classes_*coh.jsa \
           /var/log/apt /var/log/dpkg.log /var/log/alternatives.log; \
    groupadd --system --gid 1000 appuser; \
    useradd --system --uid 1000 --gid appuser --home-dir /opt/kafka --no-create-home \
            --shell /usr/sbin/nologin appuser

ENV KAFKA_HOME=/opt/kafka \
    LOG_DIR=/opt/kafka/logs \
    PATH=/opt/kafka/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

COPY --chown=root:root ${DIST_DIR}/ /opt/kafka/
COPY --chown=root:root docker/entrypoint.sh docker/healthcheck.sh /etc/kafka/docker/

RUN set -eux; \
    rm -f /opt/kafka/.assembled; \
    chmod 0755 /etc/kafka/docker/*.sh /opt/kafka/bin/*.sh; \
    mkdir -p /var/lib/kafka/data /opt/kafka/logs /mnt/shared/config; \
    chown -R appuser:appuser /var/lib/kafka /opt/kafka/logs /opt/kafka/config; \
    java -version 2>&1 | head -1

USER appuser
WORKDIR /opt/kafka
VOLUME ["/var/lib/kafka/data"]
EXPOSE 9092 9093

HEALTHCHECK --interval=15s --timeout=10s --start-period=60s --retries=4 \
    CMD ["/etc/kafka/docker/healthcheck.sh"]

ENTRYPOINT ["/etc/kafka/docker/entrypoint.sh"]
