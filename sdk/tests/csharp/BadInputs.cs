// The C# binding's answers to bad input, called as an engine plugin would: prints one line per
// case, "NAME CODE", for tests/csharp.rs to check against the documented codes.
// Usage: mono bad_inputs.exe DATA_DIR (a folder holding svc_config.json) UNUSED_BASE_URL

using System;
using Offer;

static class BadInputs
{
    static string Config(string key, string baseUrl, string extra)
    {
        return "{\"api_key\":\"" + key + "\",\"game_id\":\"6f9c2d1e-4b7a-4c2e-9d3f-1a2b3c4d5e6f\"," +
            "\"environment\":\"production\",\"base_url\":\"" + baseUrl + "\"" + extra + "}";
    }

    static void Report(string name, SvcResult code)
    {
        Console.WriteLine(name + " " + (int)code);
    }

    static int Main(string[] args)
    {
        if (args.Length != 2)
        {
            Console.Error.WriteLine("usage: bad_inputs.exe DATA_DIR UNUSED_BASE_URL");
            return 1;
        }
        string install = ",\"data_dir\":\"" + args[0] + "\",\"player_id\":\"player_0\"";
        Console.WriteLine("poll_before_init " + OfferSdk.Poll());
        Report("track_before_init", OfferSdk.Track("{\"type\":\"first_loss\"}"));
        Report("null_config", OfferSdk.Init(null));
        Report("bad_json", OfferSdk.Init("{not json"));
        Report("no_svc_config", OfferSdk.Init(Config("ofr_live_sk_abc", args[1],
            ",\"data_dir\":\"" + args[0] + "/missing\"")));
        Report("sandbox_key_in_production", OfferSdk.Init(Config("ofr_test_sk_abc", args[1], install)));
        Report("init", OfferSdk.Init(Config("ofr_live_sk_abc", args[1], install)));
        Report("init_again", OfferSdk.Init(Config("ofr_live_sk_abc", args[1], install)));
        Report("login_when_logged_in", OfferSdk.Login("player_1"));
        Report("unknown_event", OfferSdk.Track("{\"type\":\"no_such_event\"}"));
        Report("null_event", OfferSdk.Track(null));
        Report("track", OfferSdk.Track("{\"type\":\"first_loss\"}"));
        // A 3 MB source: longer than the engine takes in one request.
        Report("track_too_large", OfferSdk.Track("{\"type\":\"currency_earned\",\"currency_id\":\"gems\"," +
            "\"amount\":1,\"tx_id\":\"big\",\"source\":\"" + new string('s', 3 << 20) + "\"}"));
        Report("shutdown", OfferSdk.Shutdown());
        Report("shutdown_again", OfferSdk.Shutdown());
        return 0;
    }
}
