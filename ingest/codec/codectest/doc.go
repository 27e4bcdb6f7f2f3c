// Package codectest makes wideband codec payloads from speech files for
// tests, with Debian's ffmpeg (its libopus and G.722 encoders), so the
// decoders are checked against an independent encoder, and the packet
// loss the concealment tests play (BurstLoss). Test code only.
package codectest
