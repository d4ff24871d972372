import Testing

@Suite struct LogtoolSmokeTests {}
