// graft-fuzz TARGET [libFuzzer flags and corpus folders]
//
// One program for every fuzz target: the first argument names the reader to fuzz, the rest go to
// libFuzzer unchanged. libFuzzer's own `main` cannot be used, because a SwiftPM executable defines `main`
// itself; this one calls `LLVMFuzzerRunDriver`, libFuzzer's entry for programs with a main of their own.
// The target is kept in GRAFT_FUZZ_TARGET too, so that the copies of itself libFuzzer starts (to
// minimize a crash, or with -fork and -merge) fuzz the same reader.

import Foundation

/// libFuzzer's driver: parses its flags from `argv`, runs `callback` on every input, returns the exit
/// status. The corresponding C declaration is in libFuzzer's `FuzzerInterface.h`.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The leak sanitizer's switch for allocations that are meant to live for the whole run (declared in
/// `sanitizer/lsan_interface.h`): a target's tables are built once, with it off, so that values Swift
/// keeps behind tagged pointers (which the sanitizer cannot follow) are not reported as leaks.
@_silgen_name("__lsan_disable") func __lsan_disable()
@_silgen_name("__lsan_enable") func __lsan_enable()

func usage() -> Never {
    var text = "usage: graft-fuzz TARGET [libFuzzer flags] [corpus folders or inputs]\n\ntargets:\n"
    for target in FuzzTarget.all {
        text += "  " + target.name.padding(toLength: 18, withPad: " ", startingAt: 0) + target.summary + "\n"
    }
    FileHandle.standardError.write(Data(text.utf8))
    exit(64)
}

var arguments = CommandLine.arguments
let chosen: FuzzTarget
if arguments.count > 1, let target = FuzzTarget.named(arguments[1]) {
    chosen = target
    setenv("GRAFT_FUZZ_TARGET", target.name, 1)
    arguments.remove(at: 1)
} else if let name = getenv("GRAFT_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget.named(name) {
    chosen = target
} else {
    usage()
}
FuzzTarget.current = chosen
__lsan_disable()
chosen.prepare()
__lsan_enable()

// libFuzzer keeps the argument vector for the rest of the run (it re-reads it to start copies of
// itself), so the strings are copied to memory that is never freed.
var argc = CInt(arguments.count)
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = {
    let vector = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: arguments.count + 1)
    for (index, argument) in arguments.enumerated() { vector[index] = strdup(argument) }
    vector[arguments.count] = nil
    return vector
}()
let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
    FuzzTarget.current?.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
Scratch.removeAll()
exit(status)
