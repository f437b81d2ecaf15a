/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.qat;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What this host offers QAT, found by looking at files only: no native call, nothing that can crash.
 * ({@code QatZipper.isQatAvailable()} kills the JVM with SIGSEGV on a host without QAT devices, so it is never
 * called.)
 */
final class QatEnvironment {

    static final String QATZIP_LIBRARY = "libqatzip.so.3";

    /** PCI device ids of Intel QAT physical and virtual functions (vendor 0x8086). */
    private static final Set<String> QAT_DEVICE_IDS = Set.of(
        "0x0434", "0x0435", "0x0442", "0x0443",            // DH895xCC
        "0x37c8", "0x37c9",                                // C62x
        "0x19e2", "0x19e3",                                // C3xxx
        "0x18a0", "0x18a1", "0x18ee", "0x18ef",            // C3xxx / 200xx
        "0x4940", "0x4941", "0x4942", "0x4943", "0x4944", "0x4945", "0x4946", "0x4947",   // 4xxx / 401xx / 402xx
        "0x4948", "0x4949", "0x578a", "0x578b");           // 420xx

    private static final List<String> LIBRARY_DIRS = List.of(
        "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib",
        "/usr/local/lib", "/usr/local/lib64");

    private QatEnvironment() {
    }

    /** Why the host has no usable QAT device, or null when it has one. */
    static String hardwareAbsentReason() {
        List<String> found = new ArrayList<>();
        try (DirectoryStream<Path> dev = Files.newDirectoryStream(Path.of("/dev"), "qat_*")) {
            for (Path p : dev) found.add(p.toString());
        } catch (IOException | RuntimeException e) {
            // no /dev listing: no device
        }
        int qatPciFunctions = 0;
        try (DirectoryStream<Path> pci = Files.newDirectoryStream(Path.of("/sys/bus/pci/devices"))) {
            for (Path d : pci) {
                try {
                    String vendor = Files.readString(d.resolve("vendor")).trim();
                    String device = Files.readString(d.resolve("device")).trim();
                    if (vendor.equals("0x8086") && QAT_DEVICE_IDS.contains(device)) qatPciFunctions++;
                } catch (IOException | RuntimeException e) {
                    // unreadable: skip
                }
            }
        } catch (IOException | RuntimeException e) {
            // no sysfs
        }
        boolean vfio = Files.isDirectory(Path.of("/dev/vfio"));
        if (!found.isEmpty()) return null;                       // out-of-tree driver device nodes
        if (qatPciFunctions > 0 && vfio) return null;            // in-tree qat_4xxx driver through VFIO (qatlib)
        return "no QAT device (no /dev/qat_*, " + qatPciFunctions + " QAT PCI functions, /dev/vfio "
            + (vfio ? "present" : "absent") + ")";
    }

    /** Where libqatzip.so.3 is, or null. */
    static Path findQatzip() {
        List<String> dirs = new ArrayList<>();
        String ld = System.getenv("LD_LIBRARY_PATH");
        if (ld != null) for (String d : ld.split(":")) if (!d.isEmpty()) dirs.add(d);
        dirs.addAll(LIBRARY_DIRS);
        for (String d : dirs) {
            Path p = Path.of(d, QATZIP_LIBRARY);
            if (Files.exists(p)) return p;
        }
        return null;
    }

    /** Why qat-java cannot be loaded here (classes, zstd-jni, QATzip), or null. */
    static String librariesAbsentReason() {
        String os = System.getProperty("os.name", "") + " " + System.getProperty("os.arch", "");
        if (!os.toLowerCase().startsWith("linux") || !(os.endsWith("amd64") || os.endsWith("x86_64")))
            return "qat-java supports Linux x86-64 only, this is " + os;
        ClassLoader cl = QatEnvironment.class.getClassLoader();
        try {
            Class.forName("com.intel.qat.QatZipper", false, cl);
        } catch (ClassNotFoundException | LinkageError e) {
            return "qat-java (com.intel.qat:qat-java) is not on the classpath: " + e;
        }
        try {
            Class.forName("com.github.luben.zstd.SequenceProducer", false, cl);
        } catch (ClassNotFoundException | LinkageError e) {
            return "zstd-jni (com.github.luben:zstd-jni), which qat-java needs, is not on the classpath: " + e;
        }
        if (findQatzip() == null)
            return QATZIP_LIBRARY + " not found (install QATzip: Debian trixie's libqatzip3, libqat4, libusdm0)";
        return null;
    }
}
